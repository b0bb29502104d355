"""A real OpenAI-compatible HTTP endpoint (knowledge_docs' FakeOpenAI) answering card
drafts and judgements from a script: the *model* is scripted, the HTTP client, the graph,
the gate and the store are real."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from strata.cards.prose import ProseWriter
from strata.settings import Settings
from tests.conftest import make_settings
from tests.integration.knowledge_docs.fake_openai import FakeOpenAI, fake_openai


class CardScript:
    """Answers per response model (``Overview``, ``Judgement``): each list is consumed in
    order and its last answer repeats; every prompt is kept for the assertions."""

    def __init__(self) -> None:
        self.answers: dict[str, list[dict[str, Any]]] = {
            "Overview": [],
            "Judgement": [{"verdicts": [{"sentence": i, "supported": True} for i in range(1, 9)]}],
        }
        self.prompts: list[tuple[str, str]] = []
        self.per_package: dict[str, list[dict[str, Any]]] = {}

    def answer(self, name: str, prompt: str) -> dict[str, Any]:
        self.prompts.append((name, prompt))
        queue = self.answers[name]
        for package, drafts in self.per_package.items():
            if name == "Overview" and f"\n# {package}\n" in f"\n{prompt}":
                queue = drafts
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def drafts_for(self, package: str, *texts: str) -> None:
        """Drafts for the card of one package (by name), the others get :meth:`drafts`'."""
        self.per_package[package] = [{"overview": t} for t in texts]

    def drafts(self, *texts: str) -> None:
        self.answers["Overview"] = [{"overview": t} for t in texts]

    def judge(self, *supported: bool) -> None:
        verdicts = [{"sentence": i, "supported": s} for i, s in enumerate(supported, 1)]
        self.answers["Judgement"] = [{"verdicts": verdicts}]

    def asked(self, name: str) -> list[str]:
        return [p for n, p in self.prompts if n == name]


@contextmanager
def scripted_model() -> Iterator[tuple[FakeOpenAI, CardScript]]:
    with fake_openai([]) as server:
        script = CardScript()
        server.script = script  # type: ignore[assignment]
        yield server, script


def model_settings(base_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "llm_provider": "openai",
        "llm_base_url": base_url,
        "llm_model": "scripted",
        "llm_timeout_s": 5.0,
        "cards_prose": True,
        "llm_cost_per_1k_tokens": 0.5,
    }
    values.update(overrides)
    return make_settings(**values)


def writer(base_url: str, **overrides: Any) -> ProseWriter:
    """The real OpenAI-compatible client on ``base_url``, as the worker builds it."""
    return ProseWriter.from_settings(model_settings(base_url, **overrides))


__all__ = ["CardScript", "model_settings", "scripted_model", "writer"]

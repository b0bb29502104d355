"""A model-written overview for a card, published only when it passes the exact gate.

The model (the local one or any OpenAI-compatible endpoint, whichever
:func:`strata.knowledge.llm.build_llm_client` picks) drafts a short overview
from the compiled card's facts. The draft goes into the card's markdown as an
``Overview`` section, and the whole card is gated again: every structural claim
the prose makes (a backticked name, "depends on `x`", "calls `y`") must be
supported by the graph as of the card's commit. When a judge is on, the model
also marks each sentence supported or not by the card's facts, and the share
of supported sentences must reach ``cards_min_supported``.

A failing draft is redrafted (told why) at most ``cards_redrafts`` times; then
the card is published *without* the prose and marked ``needs_review`` with the
failing draft and the reasons. A model that times out or cannot be reached
marks the card ``prose_failed`` (the next run asks again); an answer that is not
the JSON asked for counts as a failed draft.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pydantic
import yaml

from strata.cards.gate import check_card, parse_card, prose_claims, split_frontmatter
from strata.cards.graph import Snapshot
from strata.cards.model import Card, ProseReview, ProseStatus
from strata.cards.spans import Step, Steps
from strata.errors import StrataError
from strata.settings import Settings

if TYPE_CHECKING:
    from strata.knowledge.llm_base import StructuredLLMClient

HEADING = "## Overview"
MAX_PROSE = 1200
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")

SYSTEM = (
    "You write the overview of one software package for the engineers and coding agents "
    "who work on it, using only the facts of its card. Write 2 to 5 plain sentences. "
    "Write every package, file and symbol name exactly as the card writes it, in backticks. "
    "Write 'depends on `x`' only for a package the card lists under 'Depends on', and "
    "'calls `y`' only for what the card shows it calling. Claim nothing the card does not "
    'show. Answer with a JSON object {"overview": "..."}.'
)
JUDGE = (
    "You check an overview of a software package against the facts of its card. For each "
    "numbered sentence, answer whether the card's facts support it (true) or not (false). "
    'Answer with a JSON object {"verdicts": [{"sentence": 1, "supported": true}, ...]}.'
)


class Overview(pydantic.BaseModel):
    """What the model drafts."""

    # No field description: a small model echoes it back as its answer.
    overview: str


class Verdict(pydantic.BaseModel):
    sentence: int
    supported: bool


class Judgement(pydantic.BaseModel):
    """What the judge answers: one verdict per numbered sentence."""

    verdicts: list[Verdict]


def with_prose(card: Card, text: str) -> Card:
    """The card with ``text`` as its Overview (one paragraph, before the first section);
    its claims re-read from the new markdown, so recorded and written claims agree."""
    paragraph = " ".join(text.split()).lstrip("#-*> ").strip()[:MAX_PROSE]
    front, body = split_frontmatter(card.markdown)
    lines = body.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
    lines[at:at] = [HEADING, "", paragraph, ""]
    draft = "\n".join(lines)
    claims = parse_card(_render(front, draft)).claims
    front = {**front, "claims": len(claims), "prose": "model"}
    return dataclasses.replace(card, markdown=_render(front, draft), claims=claims)


def overview_of(card: Card) -> str:
    """The Overview paragraph of a card ('' when it has none)."""
    lines = card.markdown.split("\n")
    if HEADING not in lines:
        return ""
    return lines[lines.index(HEADING) + 2]


def _render(front: dict[str, Any], body: str) -> str:
    return "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + body


def _facts(card: Card) -> str:
    return split_frontmatter(card.markdown)[1].strip()


class ProseWriter:
    """Drafts, gates, judges and redrafts one card's overview (see the module docstring)."""

    def __init__(
        self,
        client: StructuredLLMClient,
        *,
        redrafts: int = 2,
        judge: bool = True,
        min_supported: float = 0.75,
        cost_per_1k_tokens: float = 0.0,
    ) -> None:
        self.client = client
        self.redrafts = redrafts
        self.judge = judge
        self.min_supported = min_supported
        self.cost_per_1k_tokens = cost_per_1k_tokens
        self.down: StrataError | None = None  # the fault that stopped the model this run

    @classmethod
    def from_settings(cls, settings: Settings) -> ProseWriter:
        """The model the settings name (``STRATA_LLM_PROVIDER``), with the cards' limits."""
        from strata.knowledge.llm import build_llm_client

        return cls(
            build_llm_client(settings),
            redrafts=settings.cards_redrafts,
            judge=settings.cards_judge,
            min_supported=settings.cards_min_supported,
            cost_per_1k_tokens=settings.llm_cost_per_1k_tokens,
        )

    def write(
        self,
        card: Card,
        snap: Snapshot,
        run: Callable[[Awaitable[Any]], Any],
        steps: Steps,
    ) -> Card:
        """The card to publish: with the overview when a draft passed, else without it
        and marked (``run`` drives the model's coroutines on the run's event loop)."""
        from strata.knowledge.llm_base import LLMInvalidOutput

        spent = Step("card")  # every model token of this card, whatever step spent it
        reasons: tuple[str, ...] = ()
        draft = ""
        if self.down is not None:
            skipped = (f"skipped: {self.down.code}: {self.down.message}",)
            return self._marked(card, status="prose_failed", reasons=skipped, drafts=0, spent=spent)
        for attempt in range(1, self.redrafts + 2):
            try:
                with steps.step("draft", attempt=attempt) as step:
                    prompt = self._prompt(card, reasons)
                    answer = run(self._ask(SYSTEM, prompt, Overview, step, spent))
                candidate = with_prose(card, str(answer["overview"]))
                draft = candidate.markdown
                with steps.step("gate", attempt=attempt):
                    gate = check_card(candidate, snap)
                reasons = tuple(f"{c.kind} {c.object!r}: {why}" for c, why in gate.unsupported)
                if not reasons and not prose_claims(card.name, overview_of(candidate)):
                    # nothing in it the graph can check: an echo, filler or a refusal
                    reasons = ("the overview names nothing from the card (no backticked name)",)
                if not reasons and self.judge:
                    with steps.step("judge", attempt=attempt) as step:
                        ratio = self._judged(candidate, run, step, spent)
                    if ratio < self.min_supported:
                        reasons = (
                            f"the judge found {ratio:.0%} of the sentences supported by the "
                            f"card's facts, below {self.min_supported:.0%}",
                        )
            except LLMInvalidOutput as exc:
                reasons = (f"the model's answer was not the JSON asked for: {exc.message}",)
            except StrataError as exc:  # timeout, endpoint down, refused: not the draft's fault
                self.down = exc
                failed = (f"{exc.code}: {exc.message}",)
                return self._marked(
                    card, status="prose_failed", reasons=failed, drafts=attempt, spent=spent
                )
            if not reasons:
                return self._marked(candidate, status="published", drafts=attempt, spent=spent)
        drafts = self.redrafts + 1
        return self._marked(
            card, status="needs_review", reasons=reasons, draft=draft, drafts=drafts, spent=spent
        )

    def _marked(
        self,
        card: Card,
        *,
        status: ProseStatus,
        drafts: int,
        spent: Step,
        reasons: tuple[str, ...] = (),
        draft: str = "",
    ) -> Card:
        review = ProseReview(status, reasons, draft, drafts, spent.tokens, spent.cost)
        return dataclasses.replace(card, review=review)

    def _prompt(self, card: Card, reasons: tuple[str, ...]) -> str:
        text = f"The card:\n\n{_facts(card)}\n"
        if reasons:
            refused = "\n".join(f"- {r}" for r in reasons)
            text += (
                "\nYour previous overview was refused because the graph does not support "
                f"these claims:\n{refused}\nWrite it again without them.\n"
            )
        return text

    def _judged(
        self, card: Card, run: Callable[[Awaitable[Any]], Any], step: Step, spent: Step
    ) -> float:
        sentences = [s for s in _SENTENCE.split(overview_of(card)) if s.strip()]
        if not sentences:
            return 0.0
        numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(sentences, 1))
        prompt = f"The card:\n\n{_facts(card)}\n\nThe sentences:\n{numbered}\n"
        answer = run(self._ask(JUDGE, prompt, Judgement, step, spent))
        supported = {
            v["sentence"]
            for v in answer["verdicts"]
            if v.get("supported") is True and 1 <= v.get("sentence", 0) <= len(sentences)
        }
        return len(supported) / len(sentences)

    async def _ask(
        self,
        system: str,
        user: str,
        model: type[pydantic.BaseModel],
        step: Step,
        spent: Step,
    ) -> dict[str, Any]:
        from graphiti_core.prompts.models import Message

        from strata.knowledge.llm_base import metered

        with metered() as usage:
            try:
                return await self.client.generate_response(
                    [Message(role="system", content=system), Message(role="user", content=user)],
                    response_model=model,
                )
            finally:  # a refused answer cost tokens too
                cost = usage.total_tokens * self.cost_per_1k_tokens / 1000
                step.spent(usage.total_tokens, cost)
                spent.spent(usage.total_tokens, cost)


def run_on(loop: asyncio.Runner) -> Callable[[Awaitable[Any]], Any]:
    """Drive coroutines on one event loop for the whole run (a model client keeps its
    connection pool, and the local model its lock, on the loop it first ran on)."""

    def run(coro: Awaitable[Any]) -> Any:
        return loop.run(coro)  # type: ignore[arg-type]

    return run

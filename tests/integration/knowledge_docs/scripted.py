"""A scripted LLM client written against graphiti-core's ``LLMClient`` interface.

``ScriptedLLMClient`` answers every structured call graphiti makes during
``add_episode`` from a script (canned JSON per response model), so the whole
pipeline (graphiti's extraction, resolution, invalidation and writes, and
Strata's bookkeeping) runs against the real Neo4j without a model. It goes
through the same parsing, timeout and metering as the real clients
(:class:`strata.knowledge.llm.StructuredLLMClient`), and can be told to fail:
raise, hang, or answer invalid JSON for a given response model.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphiti_core.llm_client import LLMConfig
from graphiti_core.prompts.models import Message

from strata.knowledge.llm import Completion, StructuredLLMClient


@dataclass(frozen=True)
class Edge:
    source: str
    relation: str
    target: str
    fact: str
    valid_at: str | None = None


@dataclass(frozen=True)
class Scenario:
    """What the 'model' extracts from a document containing ``keyword``."""

    keyword: str
    entities: Sequence[str]
    edges: Sequence[Edge] = ()
    # new fact substring -> substring of the old facts it contradicts
    contradicts: Mapping[str, str] = field(default_factory=dict)
    # entity name -> graphiti entity_type_id (0: plain Entity)
    types: Mapping[str, int] = field(default_factory=dict)
    # entity name -> attributes of its custom entity type
    attributes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


_CANDIDATE = re.compile(r"'idx': (\d+), 'fact': (?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\")")
_ENTITY = re.compile(r'"id": (\d+), "name": "((?:[^"\\]|\\.)*)"')
_NEW_FACT = re.compile(r"<NEW FACT>\s*(.*?)\s*</NEW FACT>", re.S)


class ScriptedLLMClient(StructuredLLMClient):
    """graphiti's LLMClient answering from a script (see the module docstring)."""

    provider = "scripted"

    def __init__(
        self,
        scenarios: Sequence[Scenario] = (),
        *,
        timeout_s: float = 10.0,
        raise_on: Mapping[str, Exception] | None = None,
        raw_on: Mapping[str, str] | None = None,
        delay_on: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__(
            LLMConfig(model="scripted", temperature=0), timeout_s=timeout_s, max_output_tokens=512
        )
        self.scenarios = list(scenarios)
        self.raise_on = dict(raise_on or {})
        self.raw_on = dict(raw_on or {})
        self.delay_on = dict(delay_on or {})
        self.calls: list[str] = []

    async def _complete(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None,
        name: str,
        max_tokens: int,
        model: str | None,
    ) -> Completion:
        self.calls.append(name)
        prompt = "\n".join(m.content for m in messages)
        if name in self.delay_on:
            await asyncio.sleep(self.delay_on[name])
        if name in self.raise_on:
            raise self.raise_on[name]
        text = self.raw_on.get(name)
        if text is None:
            text = json.dumps(self.answer(name, prompt))
        return Completion(text, input_tokens=len(prompt) // 4, output_tokens=len(text) // 4)

    def _scenario(self, prompt: str) -> Scenario:
        found = [s for s in self.scenarios if s.keyword in prompt]
        if not found:
            raise AssertionError(f"no scenario matches this prompt: {prompt[:300]!r}")
        return found[0]

    def answer(self, name: str, prompt: str) -> dict[str, Any]:
        """The canned answer for one response model."""
        if name == "ExtractedEntities":
            scenario = self._scenario(prompt)
            return {
                "extracted_entities": [
                    {"name": e, "entity_type_id": scenario.types.get(e, 0)}
                    for e in scenario.entities
                ]
            }
        if name == "ExtractedEdges":
            scenario = self._scenario(prompt)
            return {
                "edges": [
                    {
                        "source_entity_name": e.source,
                        "target_entity_name": e.target,
                        "relation_type": e.relation,
                        "fact": e.fact,
                        "valid_at": e.valid_at,
                        "invalid_at": None,
                    }
                    for e in scenario.edges
                ]
            }
        if name == "EdgeDuplicate":
            return {"duplicate_facts": [], "contradicted_facts": self._contradicted(prompt)}
        if name == "NodeResolutions":  # every entity is new (exact names merge before this)
            return {
                "entity_resolutions": [
                    {"id": int(i), "name": n, "duplicate_candidate_id": -1}
                    for i, n in _ENTITY.findall(prompt.split("<EXISTING ENTITIES>", maxsplit=1)[0])
                ]
            }
        if name == "EdgeTimestamps":
            return {"valid_at": None, "invalid_at": None}
        if name == "SummarizedEntities":
            return {"summaries": []}
        if name in ("EntitySummary", "Summary"):
            return {"summary": ""}
        for scenario in self.scenarios:
            for entity, attributes in scenario.attributes.items():
                if entity in prompt:
                    return dict(attributes)
        return {}

    def _contradicted(self, prompt: str) -> list[int]:
        new = _NEW_FACT.search(prompt)
        if new is None:
            return []
        found: list[int] = []
        for scenario in self.scenarios:
            for new_part, old_part in scenario.contradicts.items():
                if new_part not in new.group(1):
                    continue
                for match in _CANDIDATE.finditer(prompt):
                    old = match.group(2) or match.group(3) or ""
                    if old_part in old:
                        found.append(int(match.group(1)))
        return sorted(set(found))

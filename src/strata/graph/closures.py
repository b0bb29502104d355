"""What re-syncing scopes closes: the open versions of a scope and the facts that
no longer assert them.

A writer that re-syncs a unit (a file, a document, a trace file) asserts what
the unit now says; every slot its scopes hold open that no new fact asserts
again is closed (invalidated at the re-sync's time, never deleted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from strata.facts import EdgeFact, Fact, NodeRef, StateFact, state_key
from strata.ontology.model import STATE, Ontology


@dataclass(frozen=True, slots=True)
class OpenVersion:
    """The open, current version of a slot: its content hash and valid time (wire form)."""

    hash: str | None
    valid_at: str


@dataclass(frozen=True, slots=True)
class Closures:
    """What re-syncing some scopes closes, and how many open slots the scopes had."""

    states: list[Fact]
    edges: list[Fact]
    open_slots: int

    @property
    def fresh(self) -> bool:
        """No open fact in these scopes: their new facts may be written without reading."""
        return self.open_slots == 0


def closing_facts(
    ontology: Ontology,
    open_now: Mapping[str, Iterable[tuple[str, str, str, str]]],
    facts: Iterable[Fact],
    at: datetime,
    repo: str,
) -> Closures:
    """Invalidations at ``at`` for every slot of ``open_now`` (per fact type) that
    ``facts`` do not assert again."""
    kept_states: set[tuple[str, str]] = set()
    kept_edges: set[tuple[str, str, str, str, str]] = set()
    for fact in facts:
        if isinstance(fact, StateFact):
            kept_states.add((fact.label, state_key(ontology, fact)))
        else:
            kept_edges.add((fact.type, fact.src.label, fact.src.key, fact.dst.label, fact.dst.key))
    states: list[Fact] = []
    edges: list[Fact] = []
    count = 0
    for rel, slots in open_now.items():
        for src_label, src, dst_label, dst in sorted(slots):
            count += 1
            if rel == STATE:
                if (src_label, src) not in kept_states:
                    states.append(StateFact.closing(src_label, src, at))
            elif (rel, src_label, src, dst_label, dst) not in kept_edges:
                edges.append(
                    EdgeFact(
                        rel,
                        NodeRef(src_label, src),
                        NodeRef(dst_label, dst),
                        repo,
                        None,
                        at,
                        change="invalidate",
                    )
                )
    return Closures(states, edges, count)

"""Re-syncing scopes: send only what changed against what the scopes hold open.

A writer that re-syncs units (files, documents) produces every fact the unit
says now. Most of them are already current: asserting them again costs a
locked read and a plan each and changes nothing. :func:`resync` reads the open
versions of the scopes once (one indexed read per fact type, on the scope
index), keeps the facts whose content differs from the open version of their
slot (or that have none), and closes the open slots no fact asserts again.
An unchanged fact is one whose slot's open version carries the same content
hash and began no later than the fact: exactly the assertions
:func:`strata.temporal.plan_set` would answer with nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from strata.facts import EdgeFact, Fact, StateFact, state_key
from strata.graph.closures import Closures, OpenVersion, closing_facts
from strata.graph.store import FactStore
from strata.ontology.model import STATE, Layer
from strata.temporal import aware, content_hash, from_wire


@dataclass(frozen=True, slots=True)
class Resync:
    """The facts to send (new or changed), the closures, and how many were current."""

    changed: list[Fact]
    closures: Closures
    unchanged: int

    @property
    def fresh(self) -> bool:
        """The scopes held nothing open: the facts may be written without reading."""
        return self.closures.fresh


def resync(
    store: FactStore,
    layer: Layer,
    scopes: Sequence[str],
    facts: Sequence[Fact],
    *,
    at: datetime,
    repo: str,
) -> Resync:
    """Diff ``facts`` (all scoped to ``scopes``) against the scopes' open versions."""
    open_now = store.open_versions(layer, scopes)
    closures = closing_facts(store.ontology, open_now, facts, at, repo)
    if closures.fresh:
        return Resync(list(facts), closures, 0)
    changed: list[Fact] = []
    unchanged = 0
    for fact in facts:
        version = _open_version(store, open_now, fact)
        if version is not None and _same(version, fact):
            unchanged += 1
        else:
            changed.append(fact)
    return Resync(changed, closures, unchanged)


def _open_version(
    store: FactStore, open_now: dict[str, dict[tuple[str, str, str, str], OpenVersion]], fact: Fact
) -> OpenVersion | None:
    if isinstance(fact, StateFact):
        key = state_key(store.ontology, fact)
        return open_now.get(STATE, {}).get((fact.label, key, fact.label, key))
    if isinstance(fact, EdgeFact):
        slot = (fact.src.label, fact.src.key, fact.dst.label, fact.dst.key)
        return open_now.get(fact.type, {}).get(slot)
    return None


def _same(version: OpenVersion, fact: Fact) -> bool:
    """The open version already says what ``fact`` asserts, over the fact's interval."""
    if fact.props is None or fact.invalid_at is not None or fact.change != "assert":
        return False
    if version.hash != content_hash(dict(fact.props)):
        return False
    return from_wire(version.valid_at) <= aware(fact.valid_at)

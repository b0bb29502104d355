"""A trace link on its way to the store, the state of one sync, and its result."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from strata.facts import NodeRef, Source
from strata.findings import Finding, as_dicts
from strata.git import Git

LINK_TYPES = ("IMPLEMENTED_BY", "AFFECTS", "VERIFIED_BY", "CONSTRAINS")


@dataclass(slots=True)
class TraceResult:
    repo: str
    commit: str
    declared: int = 0
    proposed: int = 0
    stale: int = 0
    validated: int = 0
    findings: list[Finding] = field(default_factory=list)
    facts: int = 0
    created: int = 0
    closed: int = 0
    unchanged: int = 0  # links left alone: nothing about them changed
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__ if k != "findings"}
        return {**out, "findings": as_dicts(self.findings)}


@dataclass(frozen=True, slots=True)
class Link:
    """A link ready to write: its slot, props and provenance."""

    rel: str
    src: NodeRef
    dst: NodeRef
    props: dict[str, Any]
    valid_at: datetime
    scope: str
    source: Source

    @property
    def slot(self) -> tuple[str, str, str]:
        return (self.rel, self.src.key, self.dst.key)


@dataclass(slots=True)
class SyncContext:
    """One sync: the repository, ref and commit, and what is declared there."""

    git: Git
    repo: str
    ref: str
    sha: str
    at: datetime
    requirements: dict[str, str]
    decisions: dict[str, str]
    result: TraceResult
    # Composes a Symbol key from its identity (the ontology's rule).
    symbol_key: Callable[[Mapping[str, Any]], str] | None = None
    branch: str = ""  # the Branch node's key (its state history is the index history)
    # Declared links' commits -> commit time (None: git cannot find it), across trace files.
    commits: dict[str, datetime | None] = field(default_factory=dict)


def scope_of(repo: str, name: str) -> str:
    """The sync unit of a trace file, a commit's proposals, or the test proposals."""
    return f"{repo}|trace|{name}"


def unique(links: list[Link]) -> list[Link]:
    """The first link of every slot."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for link in links:
        if link.slot not in seen:
            seen.add(link.slot)
            out.append(link)
    return out

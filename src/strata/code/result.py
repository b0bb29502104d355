"""What one index run did: the answer of the indexer, the worker and the index daemon.

Kept apart from :mod:`strata.code.run` (which imports the whole pipeline) so the
CLI's daemon client reads an answer without importing the indexer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# What a run reports as it goes: a phase's name and its counters.
Progress = Callable[[str, dict[str, Any]], None]


@dataclass(slots=True)
class IndexResult:
    """What one index run did, with timings per phase (seconds)."""

    repo: str
    ref: str
    commit: str
    base: str | None
    mode: str  # full | incremental | unchanged | deleted
    rewind: bool = False  # the ref moved back or sideways (valid from the move, not the commit)
    files_total: int = 0
    files_parsed: int = 0
    files_written: int = 0
    # Of those, files whose new facts equal what the graph holds (by digest): not re-synced.
    files_same: int = 0
    files_deleted: int = 0
    lines: int = 0
    symbols: int = 0
    calls_resolved: int = 0
    calls_unresolved: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    parse_errors: int = 0
    parse_workers: int = 0  # helper processes that parsed (0: parsed in this process)
    flow_files_read: int = 0  # files the value flow's index (re-)read (kept: the changed)
    facts: int = 0
    created: int = 0
    closed: int = 0
    expired: int = 0
    unchanged: int = 0
    # Of ``facts``, those written while the run resolved (a first index: strata.code.stream).
    facts_streamed: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    changed_symbols: list[str] = field(default_factory=list)
    changed_paths: list[str] = field(default_factory=list)
    # Node keys whose state this run recorded a new version of (search documents follow).
    changed_nodes: list[tuple[str, str]] = field(default_factory=list)  # (label, key)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (changed symbols, paths and nodes are counted, not listed)."""
        out = {k: getattr(self, k) for k in self.__slots__}
        out["changed_symbols"] = len(self.changed_symbols)
        out["changed_paths"] = len(self.changed_paths)
        out["changed_nodes"] = len(self.changed_nodes)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IndexResult:
        """The result :meth:`as_full_dict` described (the index daemon's answer)."""
        known = {k: v for k, v in data.items() if k in cls.__slots__}
        known["changed_nodes"] = [tuple(n) for n in known.get("changed_nodes", [])]
        return cls(**known)

    def as_full_dict(self) -> dict[str, Any]:
        """Every field, lists included (JSON-safe): what the index daemon sends."""
        out = {k: getattr(self, k) for k in self.__slots__}
        out["changed_nodes"] = [list(n) for n in self.changed_nodes]
        return out

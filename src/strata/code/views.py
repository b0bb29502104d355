"""What the code layer's reads return: symbols, call hits, impact, branches.

Frozen views of facts as of some moment; :mod:`strata.code.reads` builds them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from strata.code.unseen import Unresolved
from strata.temporal import decode_fact


@dataclass(frozen=True, slots=True)
class BranchView:
    """An indexed ref: its head commit as of some moment."""

    ref: str
    head: str
    committed_at: datetime | None
    files: int | None
    symbols: int | None
    valid_at: datetime


@dataclass(frozen=True, slots=True)
class SymbolView:
    """A symbol as of some moment: identity, state and evidence."""

    key: str
    repo: str
    ref: str
    path: str
    qualname: str
    name: str
    state: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.state.get("kind", ""))

    @classmethod
    def of(cls, node: dict[str, Any], state: dict[str, Any]) -> SymbolView:
        return cls(
            key=node["key"],
            repo=node["repo"],
            ref=node["ref"],
            path=node["path"],
            qualname=node["qualname"],
            name=node["name"],
            state=decode_fact(state),
        )


@dataclass(frozen=True, slots=True)
class CallHit:
    """One caller (or callee) reached by the traversal, with the call that reached it."""

    key: str
    label: Literal["Symbol", "File"]
    repo: str
    path: str
    depth: int
    via: str  # the symbol (callers) or caller (callees) this hop connects to
    line: int
    lines: tuple[int, ...]
    confidence: float
    resolution: str
    commit: str | None
    state: dict[str, Any]

    @property
    def qualified_name(self) -> str:
        return str(self.state.get("qualified_name") or self.path)


class CallList(list[CallHit]):
    """Callers (or callees) found, and what the traversal could not see.

    A plain list of hits (nearest first), plus ``total``: how many were found
    before the list was cut to ``first``, and ``unresolved``: for callers, the
    repository's unresolved call sites whose called name is the symbol's (any of
    them may be a caller the graph does not hold); for callees, the calls inside
    the symbol itself that were not linked; None when not asked for. A slice is
    a plain list.
    """

    def __init__(
        self, hits: Iterable[CallHit], *, total: int, unresolved: Unresolved | None
    ) -> None:
        super().__init__(hits)
        self.total = total
        self.unresolved = unresolved

    @property
    def truncated(self) -> bool:
        return self.total > len(self)


@dataclass(frozen=True, slots=True)
class ImpactView:
    """What a change to a symbol can reach, and what the answer could not see.

    ``unresolved`` counts the repository's unresolved call sites whose called name
    is the symbol's or one of its callers': while it is not zero, empty
    ``tests`` or ``entrypoints`` mean "none found", not "none exist".
    """

    callers: list[CallHit]
    entrypoints: list[CallHit]
    tests: list[CallHit]
    unresolved: Unresolved
    total: int  # callers found before the list was cut

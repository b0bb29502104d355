"""Readable code changes: symbol versions opened or closed in a window, classified and
grouped by commit, paged with a cursor.

It reads the same facts as :meth:`strata.graph.reads.Reads.changes` (``STATE``
versions believed now, ``valid_at`` / ``invalid_at`` in the window), restricted
to symbols, and names what happened to each: ``added``, ``removed``,
``modified`` (a version replaced another of the same symbol), ``moved`` (a
symbol vanished and one with the same body or shape appeared at the same
instant in another file) or ``renamed`` (the same, in the same file).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from strata.code.layout import EMPTY, file_key_of
from strata.code.positions import Positions
from strata.code.reads import REPO_SYMBOLS
from strata.errors import StrataError, ValidationError
from strata.graph.gateway import Gateway
from strata.temporal import AsOf, aware, from_wire, now, to_wire

ChangeKind = Literal["added", "removed", "modified", "moved", "renamed"]
CHANGE_KINDS: frozenset[str] = frozenset({"added", "removed", "modified", "moved", "renamed"})
MAX_FIRST = 200
SCAN_CAP = 20_000  # symbol versions read per window; past it the answer says it is partial

# The repository's symbols first (REPO_SYMBOLS), then their versions in the window.
SYMBOL_VERSIONS = (
    REPO_SYMBOLS
    + """
  AND ($ref IS NULL OR s.ref = $ref)
MATCH (s)-[st:STATE]->(s)
WHERE st.expired_at IS NULL
  AND ((st.valid_at >= datetime($start) AND st.valid_at < datetime($end))
    OR (st.invalid_at >= datetime($start) AND st.invalid_at < datetime($end)))
RETURN s.key AS key, s.path AS path, s.qualname AS qualname, s.name AS name, s.ref AS ref,
       st.kind AS kind, st.qualified_name AS qualified_name, st.body_hash AS body_hash,
       st.shape_hash AS shape_hash, st.line_start AS line, st.source_commit AS commit,
       toString(st.valid_at) AS valid_at, toString(st.invalid_at) AS invalid_at
LIMIT $cap
"""
)

COMMITS = """
MATCH (c:Commit)-[st:STATE]->(c)
WHERE c.repo = $repo AND c.sha IN $shas AND st.expired_at IS NULL
RETURN c.sha AS sha, st.author AS author, st.message AS message,
       toString(st.committed_at) AS committed_at
"""


@dataclass(frozen=True, slots=True)
class SymbolChange:
    """What happened to one symbol at one instant."""

    change: ChangeKind
    at: datetime
    commit: str | None
    key: str
    path: str
    qualname: str
    qualified_name: str
    kind: str
    line: int | None
    previous_key: str | None = None  # moved / renamed: the symbol it replaced
    previous_path: str | None = None
    previous_qualname: str | None = None

    @property
    def cursor(self) -> str:
        raw = f"{to_wire(self.at)}\x1f{self.path}\x1f{self.qualname}\x1f{self.change}"
        return base64.urlsafe_b64encode(raw.encode()).decode()


@dataclass(frozen=True, slots=True)
class CommitChanges:
    """The changes of one commit (author and message when the Commit node has them)."""

    commit: str | None
    at: datetime
    author: str | None
    message: str | None
    changes: list[SymbolChange]


@dataclass(slots=True)
class ChangesPage:
    """One page of changes, in (time, path, name) order, grouped by commit."""

    commits: list[CommitChanges]
    total: int  # matching changes in the window (before paging)
    has_next: bool
    end_cursor: str | None
    partial: bool = False  # the window held more versions than SCAN_CAP
    notes: list[str] = field(default_factory=list)

    @property
    def changes(self) -> list[SymbolChange]:
        return [c for group in self.commits for c in group.changes]


def classify(rows: list[dict[str, Any]], start: datetime, end: datetime) -> list[SymbolChange]:
    """Symbol changes from the versions opened or closed in [start, end) (pure)."""
    opened: dict[tuple[str, str], dict[str, Any]] = {}
    closed: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        # One wire form per instant, so an end and a start at the same moment meet.
        if row.get("valid_at") and start <= from_wire(row["valid_at"]) < end:
            opened[(to_wire(from_wire(row["valid_at"])), row["key"])] = row
        if row.get("invalid_at") and start <= from_wire(row["invalid_at"]) < end:
            closed[(to_wire(from_wire(row["invalid_at"])), row["key"])] = row
    out: list[SymbolChange] = []
    added: dict[str, list[dict[str, Any]]] = defaultdict(list)
    removed: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (at, key), row in opened.items():
        if (at, key) in closed:
            before = closed[(at, key)]
            if _same(before, row):
                continue  # re-stated with the same content (e.g. a line shift only)
            out.append(_change("modified", at, row))
        else:
            added[at].append(row)
    for (at, key), row in closed.items():
        if (at, key) not in opened:
            removed[at].append(row)
    commit_at = {at: row.get("commit") for (at, _), row in opened.items() if row.get("commit")}
    out.extend(_pair_up(added, removed, commit_at))
    out.sort(key=lambda c: (c.at, c.path, c.qualname, c.change))
    return out


def _pair_up(
    added: dict[str, list[dict[str, Any]]],
    removed: dict[str, list[dict[str, Any]]],
    commit_at: dict[str, Any],
) -> list[SymbolChange]:
    """Additions and removals at one instant; a same-body pair is one move or rename."""
    out: list[SymbolChange] = []
    for at in sorted(set(added) | set(removed)):
        gone = list(removed.get(at, []))
        for row in added.get(at, []):
            twin = _twin(row, gone)
            if twin is None:
                out.append(_change("added", at, row))
                continue
            gone.remove(twin)
            kind: ChangeKind = "renamed" if twin["path"] == row["path"] else "moved"
            out.append(
                replace_previous(_change(kind, at, row), twin),
            )
        for row in gone:
            out.append(_change("removed", at, row, commit=commit_at.get(at)))
    return out


def replace_previous(change: SymbolChange, twin: dict[str, Any]) -> SymbolChange:
    return SymbolChange(
        change=change.change,
        at=change.at,
        commit=change.commit,
        key=change.key,
        path=change.path,
        qualname=change.qualname,
        qualified_name=change.qualified_name,
        kind=change.kind,
        line=change.line,
        previous_key=twin["key"],
        previous_path=twin["path"],
        previous_qualname=twin["qualname"],
    )


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("body_hash", "shape_hash", "kind", "qualified_name")
    return all(a.get(k) == b.get(k) for k in keys)


def _twin(row: dict[str, Any], gone: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The vanished symbol with the same body (else the same shape) and kind."""
    for field_name in ("body_hash", "shape_hash"):
        value = row.get(field_name)
        if not value:
            continue
        for old in gone:
            if old.get(field_name) == value and old.get("kind") == row.get("kind"):
                return old
    return None


def _change(
    kind: ChangeKind, at: str, row: dict[str, Any], *, commit: str | None = None
) -> SymbolChange:
    return SymbolChange(
        change=kind,
        at=from_wire(at),
        commit=row.get("commit") if kind != "removed" else commit,
        key=row["key"],
        path=row["path"],
        qualname=row["qualname"],
        qualified_name=str(row.get("qualified_name") or row["qualname"]),
        kind=str(row.get("kind") or ""),
        line=row.get("line"),
    )


def decode_cursor(after: str | None) -> tuple[datetime, str, str, str] | None:
    if not after:
        return None
    try:
        parts = base64.urlsafe_b64decode(after.encode()).decode().split("\x1f")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        parts = []
    try:
        at = from_wire(parts[0]) if len(parts) == 4 else None
    except (ValueError, StrataError):
        at = None
    if at is None:
        raise ValidationError("not a cursor of codeChanges", field="after")
    return at, parts[1], parts[2], parts[3]


class CodeChanges:
    """Readable, paged symbol changes of one repository."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def page(
        self,
        repo: str,
        start: datetime,
        end: datetime,
        *,
        ref: str | None = None,
        path: str | None = None,
        kind: str | None = None,
        change: str | None = None,
        first: int = 50,
        after: str | None = None,
        timeout: float | None = None,
    ) -> ChangesPage:
        """Changes in [start, end), filtered by path prefix, symbol kind and change kind."""
        start = aware(start, what="start")
        end = aware(end, what="end")
        if end <= start:
            raise ValidationError("end must be after start", field="end")
        if not 1 <= first <= MAX_FIRST:
            raise ValidationError(f"first must be within 1..{MAX_FIRST}", field="first")
        if change is not None and change not in CHANGE_KINDS:
            raise ValidationError(
                f"unknown change kind {change!r}", field="change", allowed=sorted(CHANGE_KINDS)
            )
        cursor = decode_cursor(after)
        rows = self._gateway.read(
            SYMBOL_VERSIONS,
            repo=repo,
            ref=ref,
            start=to_wire(start),
            end=to_wire(end),
            cap=SCAN_CAP,
            timeout=timeout,
        )
        found = [
            c
            for c in classify(rows, start, end)
            if (path is None or c.path.startswith(path) or (c.previous_path or "").startswith(path))
            and (kind is None or c.kind == kind)
            and (change is None or c.change == change)
        ]
        total = len(found)
        if cursor is not None:
            found = [c for c in found if _position(c) > cursor]
        window = self._placed(found[:first], timeout)
        commits = self._commits(repo, window, timeout)
        return ChangesPage(
            commits=commits,
            total=total,
            has_next=len(found) > first,
            end_cursor=window[-1].cursor if window else None,
            partial=len(rows) >= SCAN_CAP,
        )

    def _placed(self, changes: list[SymbolChange], timeout: float | None) -> list[SymbolChange]:
        """Each change's line as of its moment (a removal: the moment before), for symbols
        whose versions keep no span of their own (ontology v4: the File's layout has it)."""
        known = now()
        moments = {
            c: AsOf(c.at - timedelta(microseconds=1) if c.change == "removed" else c.at, known)
            for c in changes
            if c.line is None
        }
        if not moments:
            return changes
        layouts = Positions(self._gateway).layouts(
            ((file_key_of(c.key), at) for c, at in moments.items()), timeout=timeout
        )

        def placed(change: SymbolChange) -> SymbolChange:
            at = moments.get(change)
            if at is None:
                return change
            span = layouts.get((file_key_of(change.key), at), EMPTY).span(change.qualname)
            return dataclasses.replace(change, line=span[0] if span else None)

        return [placed(c) for c in changes]

    def _commits(
        self, repo: str, changes: list[SymbolChange], timeout: float | None
    ) -> list[CommitChanges]:
        shas = sorted({c.commit for c in changes if c.commit})
        info: dict[str, dict[str, Any]] = {}
        if shas:
            rows = self._gateway.read(COMMITS, repo=repo, shas=shas, timeout=timeout)
            info = {r["sha"]: r for r in rows}
        groups: dict[tuple[datetime, str | None], list[SymbolChange]] = {}
        for c in changes:
            groups.setdefault((c.at, c.commit), []).append(c)
        return [
            CommitChanges(
                commit=sha,
                at=at,
                author=info.get(sha or "", {}).get("author"),
                message=info.get(sha or "", {}).get("message"),
                changes=items,
            )
            for (at, sha), items in groups.items()
        ]


def _position(c: SymbolChange) -> tuple[datetime, str, str, str]:
    return (c.at, c.path, c.qualname, c.change)

"""The "what changed" evidence: symbol changes in a window, the target's own first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from strata.code.changes import CodeChanges
from strata.code.reads import CodeReads
from strata.context import evidence as ev
from strata.context.pack import Pack
from strata.graph.reads import Reads
from strata.ontology.model import Ontology
from strata.temporal import AsOf

CHANGES_FIRST = 60
RECENT_HEADS = 5  # without a date: since the 5th-latest indexed head


def add_changes(
    pack: Pack,
    changes: CodeChanges,
    start: datetime,
    as_of: AsOf,
    *,
    path: str | None,
    key: str | None,
    timeout: float | None,
) -> None:
    """Lines for the changes in [start, as_of], newest first; a reason when there are none."""
    end = as_of.valid_at + timedelta(seconds=1)
    page = changes.page(
        pack.repository, start, end, path=path, first=CHANGES_FIRST, timeout=timeout
    )
    newest = list(reversed(page.changes))
    mine = [c for c in newest if key is not None and key in (c.key, c.previous_key)]
    found = mine + [c for c in newest if c not in mine]  # the target's own changes first
    pack.lines += ev.change_lines(found, base=80)
    if page.total > len(found):
        pack.notes.append(f"{page.total - len(found)} more changes in the window")
    if not found:
        where = f" under {path}" if path else ""
        pack.reasons.append(
            f"no symbol changed{where} between {start.date()} and {as_of.valid_at.date()}"
        )


def recent_start(
    code: CodeReads,
    reads: Reads,
    ontology: Ontology,
    repository: str,
    as_of: AsOf,
    *,
    timeout: float | None,
) -> datetime:
    """The valid time of the RECENT_HEADS-th latest index of the first branch (the first
    index adds every symbol: it is skipped while later ones exist)."""
    branches = code.branches(repository, as_of, timeout=timeout)
    if not branches:
        return as_of.valid_at - timedelta(days=30)
    key = ontology.node("Branch").make_key({"repo": repository, "ref": branches[0].ref})
    times = sorted(
        v.valid_at
        for v in reads.state_history("Branch", key, timeout=timeout)
        if v.valid_at <= as_of.valid_at
    )
    if len(times) > 1:
        return times[max(1, len(times) - RECENT_HEADS)]
    return times[0] if times else datetime(1970, 1, 1, tzinfo=UTC)

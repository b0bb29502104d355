"""Files a code write of several transactions was re-syncing when it stopped.

A push of a few files is written in one transaction: it lands whole or not at
all. A larger write (a full index, a change many files depend on) is several
transactions, the Branch head last, so a failure halfway leaves the head where
it was and some files with the new facts. The next run plans from the head's
commit with git's diff, which says nothing about those files (a push that puts
their content back diffs empty against the head). So before such a write its
files are noted here, in the graph, and the note is removed once the head
landed; a run that finds a note for another commit than the head re-syncs the
noted files, reading their facts back (nothing is trusted, no digest skips them).
A first index that fails takes its facts back instead and drops its note
(:meth:`strata.code.sync.Sync.retract`); the note still covers a run killed
before it could, and a retraction that failed too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from strata.graph.gateway import Gateway

MARK = """
MERGE (p:IndexPending {key: $key})
SET p.repo = $repo, p.ref = $ref, p.commit = $commit, p.paths = $paths,
    p.marked_at = datetime($now)
"""
READ = "MATCH (p:IndexPending {key: $key}) RETURN p.commit AS commit, p.paths AS paths"
CLEAR = "MATCH (p:IndexPending {key: $key}) DELETE p"


@dataclass(frozen=True, slots=True)
class Pending:
    """The note: the commit the stopped write was indexing, and its files."""

    commit: str
    paths: frozenset[str]


class PendingWrites:
    """The notes of one graph, by repository and ref."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def mark(self, repo: str, ref: str, commit: str, paths: Iterable[str]) -> None:
        """Note ``paths`` before a write of several transactions (one note per ref:
        the files of an earlier stopped write are among these, the run re-syncs them)."""
        self._gateway.write(
            MARK,
            key=_key(repo, ref),
            repo=repo,
            ref=ref,
            commit=commit,
            paths=sorted(paths),
            now=datetime.now(UTC).isoformat(),
        )

    def read(self, repo: str, ref: str) -> Pending | None:
        rows = self._gateway.read(READ, key=_key(repo, ref))
        if not rows:
            return None
        return Pending(str(rows[0]["commit"]), frozenset(rows[0]["paths"] or ()))

    def clear(self, repo: str, ref: str) -> None:
        """Remove the note once the head landed (bookkeeping: no fact is deleted)."""
        self._gateway.write(CLEAR, key=_key(repo, ref))


def _key(repo: str, ref: str) -> str:
    return f"{repo}\x1f{ref}"

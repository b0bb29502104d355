"""One card run: skeleton, detail of the cards to rebuild, then per package compile,
(draft, gate, judge,) store; then close the cards whose package vanished.

Which cards a run rebuilds: those whose sources changed since they were
compiled (a push that touches one package rebuilds that package's card, and
the cards whose dependency counts it changed), those that do not exist yet,
and, when prose is on, those still without prose or whose model failed last
time. A ``needs_review`` card waits for a reviewer (or a change of its sources).
Which cards need it is decided on the snapshot's skeleton (files and their
hashes, dependency counts, links); symbols, calls and changes are read only
for those packages. A card whose package is gone at the commit is closed there
(``invalid_at``): it reads as it was as of before, and no longer after. Two
pushes racing: the worker runs one card run per repository and ref at a time
(a lock), and a run at a commit older than a stored card leaves that card as it
is (``superseded``): a late run of an older push never replaces a newer card.

Resumable: cards are stored as they finish (one write per card when a model
drafts, since each costs seconds; batches of :data:`BATCH` otherwise), and a
stored card whose fingerprint matches the graph is fresh, so a run killed
half-way continues from the last stored card instead of from zero.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from strata.cards.compile import compile_card
from strata.cards.graph import Snapshot, load_detail
from strata.cards.model import Card
from strata.cards.prose import ProseWriter, run_on
from strata.cards.service import CardService, recorded_boundaries
from strata.cards.spans import Steps
from strata.git import Git

BATCH = 25  # cards per write without a model: one UNWIND round trip each


@dataclass(slots=True)
class RunResult:
    """What one run rebuilt and what it spent (the job's result)."""

    commit: str
    rebuilt: list[Card] = field(default_factory=list)
    fresh: int = 0
    closed: list[Card] = field(default_factory=list)  # cards whose package vanished
    superseded: list[Card] = field(default_factory=list)  # compiled at a later commit
    steps: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        by_status: dict[str, list[str]] = {}
        for card in self.rebuilt:
            if card.status is not None:
                by_status.setdefault(card.status, []).append(card.name)
        return {
            "commit": self.commit,
            "rebuilt": sorted(c.name for c in self.rebuilt),
            "fresh": self.fresh,
            "closed": sorted(c.name for c in self.closed),
            "superseded": sorted(c.name for c in self.superseded),
            "needs_review": sorted(by_status.get("needs_review", [])),
            "prose_failed": sorted(by_status.get("prose_failed", [])),
            "published_prose": sorted(by_status.get("published", [])),
            **self.steps,
        }


class CardPipeline:
    """Rebuilds a repository's cards that need it, one stored card at a time."""

    def __init__(
        self,
        service: CardService,
        *,
        prose: ProseWriter | None = None,
        steps: Steps | None = None,
        progress: Callable[[int, int, Card], None] | None = None,
    ) -> None:
        self.service = service
        self.prose = prose
        self.steps = steps or Steps()
        self.progress = progress

    def run(
        self,
        repo: str,
        ref: str = "main",
        commit: str | None = None,
        *,
        git: Git | None = None,
        packages: set[str] | None = None,
    ) -> RunResult:
        """Rebuild (and store) the cards that need it as of ``commit`` (default: the head);
        ``packages`` limits the run to those paths."""
        steps = self.steps
        with steps.step("run", repository=repo, ref=ref):
            stored = {c.package: c for c in self.service.cards(repo, ref)}
            with steps.step("snapshot"):
                # the skeleton only: which cards need it is known before any symbol is read
                snap = self.service.snapshot(
                    repo,
                    ref,
                    commit,
                    git=git,
                    packages=set(),
                    boundaries=recorded_boundaries(stored.values()),
                )
            considered = [p for p in sorted(snap.packages) if packages is None or p in packages]
            # a card already compiled at a later commit is not rebuilt from an earlier one
            # (a late run of an older push): it stays, and the run says so
            later = [p for p in considered if _later(stored.get(p), snap)]
            wanted = [p for p in considered if p not in later and self._wants(stored.get(p), snap)]
            with steps.step("detail", packages=len(wanted)):
                load_detail(self.service.gateway, snap, set(wanted))
            result = RunResult(
                snap.commit,
                fresh=len(considered) - len(wanted) - len(later),
                superseded=[stored[p] for p in later],
            )
            pending: list[Card] = []
            with self._loop() as run:
                for number, package in enumerate(wanted, 1):
                    with steps.step("card", package=package):
                        with steps.step("compile"):
                            card = compile_card(snap, package)
                        if self.prose is not None and run is not None:
                            card = self.prose.write(card, snap, run, steps)
                        pending.append(card)
                        if self.prose is not None or len(pending) >= BATCH:
                            self._store(pending)
                    result.rebuilt.append(card)
                    if self.progress is not None:
                        self.progress(number, len(wanted), card)
                self._store(pending)
            result.closed = self._close_vanished(stored, snap, packages)
        result.steps = steps.summary()
        return result

    def _close_vanished(
        self, stored: dict[str, Card], snap: Snapshot, packages: set[str] | None
    ) -> list[Card]:
        """Close, at the snapshot's commit, the cards whose package it no longer has (a
        run at an older commit than a card closes nothing of it)."""
        gone = [
            card
            for path, card in sorted(stored.items())
            if path not in snap.packages
            and (packages is None or path in packages)
            and card.valid_at <= snap.valid_at
        ]
        if gone:
            with self.steps.step("close", cards=len(gone)):
                self.service.store.close(gone, snap.valid_at)
        return gone

    def _wants(self, stored: Card | None, snap: Snapshot) -> bool:
        if stored is None or self.service.staleness(stored, snap).stale:
            return True
        if self.prose is None:
            return False
        return stored.status in (None, "prose_failed")

    def _store(self, pending: list[Card]) -> None:
        if pending:
            with self.steps.step("store"):
                self.service.store.write(pending)
            pending.clear()

    @contextlib.contextmanager
    def _loop(self) -> Iterator[Callable[[Any], Any] | None]:
        if self.prose is None:
            yield None
            return
        with asyncio.Runner() as loop:
            yield run_on(loop)


def _later(stored: Card | None, snap: Snapshot) -> bool:
    return stored is not None and stored.valid_at > snap.valid_at

"""One card run: snapshot, then per package compile, (draft, gate, judge,) store.

Which cards a run rebuilds: those whose sources changed since they were
compiled (a push that touches one package rebuilds that package's card, and
the cards whose dependency counts it changed), those that do not exist yet,
and, when prose is on, those still without prose or whose model failed last
time. A ``needs_review`` card waits for a reviewer (or a change of its sources).

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
from strata.cards.graph import Snapshot
from strata.cards.model import Card
from strata.cards.prose import ProseWriter, run_on
from strata.cards.service import CardService
from strata.cards.spans import Steps
from strata.git import Git

BATCH = 25  # cards per write without a model: one UNWIND round trip each


@dataclass(slots=True)
class RunResult:
    """What one run rebuilt and what it spent (the job's result)."""

    commit: str
    rebuilt: list[Card] = field(default_factory=list)
    fresh: int = 0
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
            with steps.step("snapshot"):
                snap = self.service.snapshot(repo, ref, commit, git=git)
            stored = {c.package: c for c in self.service.cards(repo, ref)}
            considered = [p for p in sorted(snap.packages) if packages is None or p in packages]
            wanted = [p for p in considered if self._wants(stored.get(p), snap)]
            result = RunResult(snap.commit, fresh=len(considered) - len(wanted))
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
        result.steps = steps.summary()
        return result

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

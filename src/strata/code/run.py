"""The state of one index run, shared by its phases (read, plan, project, sync)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from strata.code.cache import EarlySet, ExtractSet
from strata.code.flow.statements import StatementIndex
from strata.code.modules import ModuleIndex, PackageInfo
from strata.code.pending import Pending
from strata.code.projection import CodeProjection, Snapshot
from strata.code.resolver import Resolver
from strata.code.result import IndexResult
from strata.code.stream import FreshFiles
from strata.git import Git


@dataclass(slots=True)
class Run:
    """The state of one index run, filled phase by phase."""

    git: Git
    snapshot: Snapshot
    result: IndexResult
    clock: Clock
    projection: CodeProjection
    packages: list[PackageInfo] = field(default_factory=list)
    extracts: ExtractSet = field(default_factory=ExtractSet)
    # The cached set of the indexed head (path -> its old state), and whatever
    # set the cache held (reusable by blob, whichever commit it is of).
    previous: ExtractSet = field(default_factory=ExtractSet)
    reusable: ExtractSet = field(default_factory=ExtractSet)
    index: ModuleIndex = field(default_factory=lambda: ModuleIndex({}, []))
    resolver: Resolver | None = None  # built once: planning asks its flow for dependents
    # The note of a write of this ref that stopped halfway (strata.code.pending), if any.
    pending: Pending | None = None
    # The flow's writers' index this process keeps for the repository (None: built anew).
    statements: StatementIndex | None = None
    # A first index's files being written while the run resolves (strata.code.stream).
    stream: FreshFiles | None = None
    # The cache file the parse helpers' answers go to as they come (strata.code.cache).
    early: EarlySet | None = None
    # A write of several transactions into files' scopes that held nothing open (a
    # first index): the scopes and a time before its first batch. A run that fails
    # takes back what it wrote there (Sync.retract).
    first_write: FirstWrite | None = None

    def ensure_resolver(self) -> Resolver:
        """The run's resolver over :attr:`index` (built on first use)."""
        if self.resolver is None:
            self.resolver = Resolver(self.index, statements=self.statements)
        return self.resolver

    def release(self) -> None:
        """The run is over: its resolver is freed now (:meth:`Resolver.release`)."""
        if self.resolver is not None:
            self.resolver.release()
            self.resolver = None


@dataclass(frozen=True, slots=True)
class FirstWrite:
    """Where a first index writes (files' scopes empty when it began) and since when."""

    scopes: list[str]
    since: datetime


class Clock:
    """Wall time per phase of a run."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.laps: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round(now - self.last, 4)
        self.last = now

    def done(self) -> dict[str, float]:
        self.laps["total"] = round(time.perf_counter() - self.start, 4)
        return self.laps

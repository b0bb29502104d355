"""Wiring of the code layer for its two callers: the code worker and the CLI."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import redis
import structlog

from strata import locks
from strata.code.cache import ExtractCache
from strata.code.flow.exports import warm_mentions
from strata.code.flow.statements import StatementIndexes
from strata.code.heap import settle as settle_heap
from strata.code.indexer import CodeIndexer, IndexResult, Progress
from strata.code.listing import Listings
from strata.code.parallel import start_helper
from strata.errors import StrataError
from strata.git import Git
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.locations import record_local_source
from strata.ontology import Ontology
from strata.settings import Settings

log = structlog.get_logger(component="code-service")

# A run that wrote this many versions (a first index, a change most files depend
# on) moved Neo4j's statistics enough that it plans the write statements again:
# the worker and the index daemon rehearse them after such a run (5-7 s of Neo4j
# planning on Django's graph, 0.3-0.5 s once planned), so the next push does not
# plan them inside its write (0.7-0.8 s instead of 0.04-0.05 s).
REHEARSE_AFTER_VERSIONS = 5000


def _rehearse(store: FactStore) -> None:
    """The rehearsal thread: a failure costs the next push its planning, nothing else."""
    try:
        store.rehearse_writes("code")
    except StrataError as exc:
        log.warning("push_writes.rehearsal_failed", error=exc.message)


@dataclass(slots=True)
class CodeService:
    """Builds the indexer from settings; one per process.

    Its one :class:`ExtractCache` serves every indexer it builds, so a job finds
    the extracts the previous job of the process kept in memory. Callers flush
    the cache (``cache.flush()``) before they report or exit; :meth:`index_path`
    does so itself. Not for concurrent use from threads: the worker (Celery
    prefork) runs one job at a time per process and the CLI one index at a time.
    """

    settings: Settings
    gateway: Gateway
    ontology: Ontology
    cache: ExtractCache = field(init=False)
    # The flow's writers' index per repository, kept between the jobs of this process.
    statements: StatementIndexes = field(init=False)
    # The last tree listing per repository, patched by the next job's diff.
    listings: Listings = field(init=False)
    # The rehearsal of the push writes running in the background (warm_push), if any.
    _rehearsal: threading.Thread | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.cache = ExtractCache(self.settings.var_dir / "cache" / "extracts")
        self.statements = StatementIndexes()
        self.listings = Listings()

    def indexer(self, progress: Progress | None = None) -> CodeIndexer:
        store = FactStore(self.gateway, self.ontology)
        return CodeIndexer(
            store,
            Reads(self.gateway, self.ontology),
            cache=self.cache,
            max_file_bytes=self.settings.max_file_bytes,
            progress=progress,
            statements=self.statements,
            listings=self.listings,
        )

    def settle(self, repo: str, ref: str) -> None:
        """After a job (no run alive): compute what the next run of ``repo``/``ref``
        would otherwise compute for every file (the mentions its plan reads), then
        collect the job's leftovers and keep the long-lived extract sets and flow
        indexes out of later collections (:func:`strata.code.heap.settle`), and
        have the parse helper running (:func:`strata.code.parallel.start_helper`)."""
        held = self.cache.held(repo, ref)
        if held is not None:
            warm_mentions(held.files.values())
        start_helper()  # the next run's changed files parse there
        settle_heap()

    def warm_push(self, written: int) -> None:
        """Have Neo4j plan the next push's reads of its open facts now
        (:meth:`FactStore.warm_open_reads`), not inside it. After a run that wrote
        at least :data:`REHEARSE_AFTER_VERSIONS` versions (its statistics moved:
        Neo4j plans again) also its writes (:meth:`FactStore.rehearse_writes`), on a
        thread: 5-7 s of planning once a large index moved the statistics, which a
        push that comes meanwhile does not wait for."""
        store = FactStore(self.gateway, self.ontology)
        store.warm_open_reads("code")
        if written < REHEARSE_AFTER_VERSIONS:
            return
        if self._rehearsal is not None and self._rehearsal.is_alive():
            return  # one at a time: it plans the same statements
        self._rehearsal = threading.Thread(
            target=_rehearse, args=(store,), name="rehearse-push-writes", daemon=True
        )
        self._rehearsal.start()

    def index_path(
        self,
        path: Path,
        *,
        repo: str,
        ref: str,
        rev: str = "HEAD",
        since: datetime | None = None,
        commits: int | None = None,
        progress: Progress | None = None,
    ) -> list[IndexResult]:
        """Index a local clone: its ``rev`` only, or its history (oldest first).

        Takes the code lock of ``repo``/``ref`` that the code worker takes, so a
        push being indexed and a CLI run never write the same facts at once (both
        would open every fact). With Redis unreachable no worker can run either
        (Redis is their broker), and the run goes on without it.
        """
        git = Git(path)
        git.check()
        migrations.require_head(self.gateway, self.settings.migrations_dir)
        # Readers of blobs after the run (search body words, context, cards) find it here.
        record_local_source(self.gateway, repo, path)
        indexer = self.indexer(progress)
        try:
            with self._code_lock(repo, ref):
                if since is None and commits is None:
                    return [indexer.index(git, repo, ref, git.resolve(rev))]
                history = git.history(rev, since=since, max_count=commits)
                return indexer.index_history(git, repo, ref, history)
        finally:
            self.cache.flush()  # the CLI exits right after: the parses must be on disk

    @contextmanager
    def _code_lock(self, repo: str, ref: str) -> Iterator[None]:
        client = redis.Redis.from_url(self.settings.redis_url, socket_connect_timeout=2)
        try:
            client.ping()
        except redis.RedisError:
            log.warning("index.unlocked", repo=repo, ref=ref, reason="redis unreachable")
            yield
            return
        try:
            with locks.repository_lock(
                client, locks.lock_key("code", repo, ref), f"index of {repo}/{ref}"
            ):
                yield
        finally:
            client.close()

"""Heavy reads (search, context packs) in a small pool of processes beside the API's own.

Why: a symbol lookup costs ~2 ms of CPU; a search embeds its query (a numpy pass
of the sentence encoder, 5-35 ms), fuses, hydrates and may embed pending
documents; a context pack runs searches and reads blobs. In one process they
share the GIL and the default thread pool, so cheap lookups queued behind them
(bench/load.py: symbol p99 80-140 ms at 4 clients in the mix). Here they run in
``api_heavy_workers`` spawned processes, each with its own Neo4j driver and
embedder and a lower CPU priority (``nice``), so that:

- at most that many heavy reads run at once; the others wait in the pool's queue,
  never in the API's threads (until the pool has started, and with
  ``api_heavy_workers = 0``, they run in this process, one at a time);
- the API process's event loop and GIL stay free for cheap reads;
- when the cores are contended, the kernel runs the cheap reads first.

The pool starts with the app and is shut down with it.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from strata.context.builder import ContextBuilder
from strata.context.pack import Pack
from strata.context.sources import git_blobs
from strata.errors import DatabaseError
from strata.graph.gateway import Gateway
from strata.locations import repository_git
from strata.ontology import load_ontology
from strata.ontology.model import Ontology
from strata.registry import RepoRegistry
from strata.search.docs import SearchIndex, embedder_for
from strata.search.service import SearchResult, SearchService
from strata.security import ServerKeys
from strata.settings import Settings
from strata_api.graphql.errors import request_timeout, timed_out

# Heavy reads yield the cores to cheap ones (and to Neo4j) when both want them.
NICE = 5
RESTART_S = 30.0  # a pool that failed to start is tried again after this long


def search_service(settings: Settings, gateway: Gateway) -> SearchService:
    """Search with the settings' embedder (loaded once per process)."""
    return SearchService(gateway, SearchIndex(gateway, embedder_for(settings)))


def context_builder(
    settings: Settings,
    gateway: Gateway,
    ontology: Ontology,
    registry: RepoRegistry | None,
    search: SearchService,
) -> ContextBuilder:
    """A context builder whose blobs come from wherever :mod:`strata.locations` finds
    the repository (registered path, mirror, or the clone `strata index` read)."""
    locate = repository_git(gateway, settings.mirrors_dir)
    return ContextBuilder(gateway, ontology, search, git_blobs(locate))


@dataclass
class _Readers:
    """What one process needs for heavy reads: built once per process."""

    settings: Settings
    search: SearchService
    builder: ContextBuilder

    @classmethod
    def build(
        cls,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology | None,
        registry: RepoRegistry | None,
    ) -> _Readers:
        ontology = ontology or load_ontology(settings.ontology_dir)
        search = search_service(settings, gateway)
        builder = context_builder(settings, gateway, ontology, registry, search)
        return cls(settings, search, builder)

    def search_now(self, deadline: float, kwargs: dict[str, Any]) -> SearchResult:
        try:
            return self.search.search(timeout=self._left(deadline), **kwargs)
        except DatabaseError as exc:
            raise timed_out(exc, self.settings) from exc

    def context_now(self, deadline: float, kwargs: dict[str, Any]) -> Pack:
        try:
            return self.builder.build(timeout=self._left(deadline), **kwargs)
        except DatabaseError as exc:
            raise timed_out(exc, self.settings) from exc

    def _left(self, deadline: float) -> float:
        """Seconds left of the request's budget (wall clock: it crosses processes)."""
        left = deadline - time.time()
        if left <= 0.05:  # spent waiting in the queue: the request has timed out
            raise request_timeout(self.settings)
        return left


_process: _Readers | None = None  # the pool process's readers (set by _start)


def _start(settings: Settings, parent: int) -> None:
    """Pool initializer: lower priority, one driver, the embedder loaded now."""
    global _process  # noqa: PLW0603 - one set of readers per pool process, by design
    os.nice(NICE)
    threading.Thread(target=_orphan_watch, args=(parent,), daemon=True).start()
    gateway = Gateway.connect(settings)
    registry = RepoRegistry(gateway, ServerKeys(settings.secret_key.get_secret_value()))
    _process = _Readers.build(settings, gateway, load_ontology(settings.ontology_dir), registry)
    _process.search.warm()


def _orphan_watch(parent: int) -> None:
    """Exit when the API process is gone (killed without shutting the pool down): a
    pool process would otherwise wait for work forever."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _readers() -> _Readers:
    if _process is None:
        raise RuntimeError("not a heavy-read pool process")
    return _process


def _search(deadline: float, kwargs: dict[str, Any]) -> SearchResult:
    return _readers().search_now(deadline, kwargs)


def _context(deadline: float, kwargs: dict[str, Any]) -> Pack:
    return _readers().context_now(deadline, kwargs)


def _started() -> bool:
    return _process is not None


class HeavyReads:
    """Runs searches and context packs off the API process, bounded by the request's
    remaining time. Until the pool has started (its processes import Strata and load
    the embedder: seconds, more on a loaded machine), and with 0 workers, they run in
    this process's threads, one at a time, so no request waits for a pool to start."""

    def __init__(
        self,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology | None,
        registry: RepoRegistry | None,
    ) -> None:
        self._settings = settings
        self._workers = settings.api_heavy_workers
        self._pool: ProcessPoolExecutor | None = None
        self._ready: Future[bool] | None = None  # the pool's first answer: it has started
        self._started_at = -RESTART_S
        self._lock = threading.Lock()
        self._local: _Readers | None = None
        self._local_args = (settings, gateway, ontology, registry)
        self._one_at_a_time = asyncio.Semaphore(1)

    @classmethod
    def started(
        cls,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology | None,
        registry: RepoRegistry | None,
    ) -> HeavyReads:
        """The app's runner with its pool starting now."""
        heavy = cls(settings, gateway, ontology, registry)
        heavy.warm()
        return heavy

    @property
    def in_process(self) -> bool:
        return self._workers == 0

    def ready(self) -> bool:
        """True once the pool's processes have started and answered."""
        ready = self._ready
        return ready is not None and ready.done() and ready.exception() is None

    async def search(self, timeout: float, **kwargs: Any) -> SearchResult:
        """``SearchService.search(**kwargs)`` within ``timeout`` seconds."""
        found: SearchResult = await self._run(_search, "search_now", timeout, kwargs)
        return found

    async def context(self, timeout: float, **kwargs: Any) -> Pack:
        """``ContextBuilder.build(**kwargs)`` within ``timeout`` seconds."""
        pack: Pack = await self._run(_context, "context_now", timeout, kwargs)
        return pack

    def warm(self) -> None:
        """Start the pool unless it runs or is starting (a pool that failed to start,
        e.g. Neo4j unreachable, is tried again after RESTART_S)."""
        if self.in_process:
            return
        with self._lock:
            ready = self._ready
            failed = ready is not None and ready.done() and ready.exception() is not None
            if self._pool is not None and not failed:
                return
            if time.monotonic() - self._started_at < RESTART_S:
                return
            broken, self._pool = (
                self._pool,
                ProcessPoolExecutor(
                    max_workers=self._workers,
                    # spawn: the API process has threads (driver, event loop); fork would
                    # copy their locks mid-use.
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start,
                    initargs=(self._settings, os.getpid()),
                ),
            )
            self._started_at = time.monotonic()
            self._ready = self._pool.submit(_started)
        if broken is not None:
            broken.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the pool now: its processes only read, so nothing is left half done,
        and waiting for one still loading the embedder would hold up the API's exit."""
        with self._lock:
            pool, self._pool, self._ready = self._pool, None, None
        if pool is None:
            return
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(timeout=5)

    async def _run(self, remote: Any, local: str, timeout: float, kwargs: dict[str, Any]) -> Any:
        deadline = time.time() + timeout
        self.warm()
        pool = self._pool
        if pool is not None and self.ready():
            try:
                return await asyncio.wrap_future(pool.submit(remote, deadline, kwargs))
            except BrokenProcessPool:
                # A pool process died (killed, out of memory): a new pool starts, and
                # this read runs here meanwhile.
                self._drop(pool)
                self.warm()
        async with self._one_at_a_time:
            readers = self._in_process()
            return await asyncio.to_thread(getattr(readers, local), deadline, kwargs)

    def _drop(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is broken:
                self._pool, self._ready, self._started_at = None, None, -RESTART_S
        broken.shutdown(wait=False, cancel_futures=True)

    def _in_process(self) -> _Readers:
        with self._lock:
            if self._local is None:
                self._local = _Readers.build(*self._local_args)
            return self._local

"""Per-process resources of a worker, built once on first use and closed at exit."""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass
from functools import cached_property

import redis

from strata.code.service import CodeService
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.jobstore import JobStore, redis_client
from strata.ontology import Ontology, load_ontology
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings


@dataclass
class WorkerContext:
    settings: Settings

    @cached_property
    def gateway(self) -> Gateway:
        """The driver, once the graph has every migration: a task in an unmigrated
        graph fails with a clear error (and the next task checks again)."""
        gateway = Gateway.connect(self.settings)
        try:
            migrations.require_head(gateway, self.settings.migrations_dir)
        except BaseException:
            gateway.close()
            raise
        return gateway

    @cached_property
    def ontology(self) -> Ontology:
        return load_ontology(self.settings.ontology_dir)

    @cached_property
    def redis(self) -> redis.Redis:
        return redis_client(self.settings.redis_url)  # rides out a Redis restart

    @cached_property
    def jobs(self) -> JobStore:
        return JobStore(self.redis)

    @cached_property
    def registry(self) -> RepoRegistry:
        return RepoRegistry(self.gateway, ServerKeys(self.settings.secret_key.get_secret_value()))

    @cached_property
    def code(self) -> CodeService:
        return CodeService(self.settings, self.gateway, self.ontology)

    def close(self) -> None:
        if "gateway" in self.__dict__:
            self.gateway.close()
        if "redis" in self.__dict__:
            self.redis.close()


_lock = threading.Lock()
_context: WorkerContext | None = None


def current_context() -> WorkerContext | None:
    """The process's context if one was built (nothing is built here)."""
    return _context


def worker_context(settings: Settings) -> WorkerContext:
    """The process's context for these settings (built once)."""
    global _context  # noqa: PLW0603 - one context per worker process, by design
    with _lock:
        if _context is None:
            _context = WorkerContext(settings)
            atexit.register(_context.close)
        return _context

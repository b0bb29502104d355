"""The typed per-request context handed to every resolver (``Info[Context, None]``).

Resolvers read through the context, never around it:

- ``await info.context.run(reads.method, *args, **kwargs)``: a blocking core read
  in a worker thread, given the request's remaining time budget as ``timeout=``
  (the Neo4j transaction timeout), so a slow query is aborted in the database
  as well and reported as ``TIMEOUT``. ``await info.context.read(CYPHER, **params)``
  is the same for one ad-hoc Cypher read;
- ``info.context.principal``: who is calling (``can_read(repo)``, ``require(...)``);
  ``readable_names()`` is its readable repositories as a query parameter;
- ``info.context.page(first)``: a page size checked against the server's cap;
- ``info.context.code`` / ``trace`` / ``graph``: the core's read services on
  this request's gateway and ontology.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import strawberry
from strawberry.fastapi import BaseContext

from strata.code.reads import MAX_FIRST, CodeReads
from strata.errors import ConfigError, DatabaseError
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.jobstore import JobStore
from strata.ontology.model import Ontology
from strata.registry import RepoRegistry
from strata.security import Principal
from strata.settings import Settings
from strata.trace.reads import TraceReads
from strata_api.graphql.arguments import bounded
from strata_api.graphql.errors import request_timeout, timed_out
from strata_api.tasks import TaskSender

if TYPE_CHECKING:
    from strata_api.heavy import HeavyReads

T = TypeVar("T")
# Never hand Neo4j a zero timeout: zero means "no timeout" to the server.
_MIN_DB_TIMEOUT_S = 0.05


@dataclass
class Context(BaseContext):
    settings: Settings
    gateway: Gateway
    principal: Principal = field(default_factory=Principal.nobody)
    job_store: JobStore | None = None
    task_sender: TaskSender | None = None
    registry: RepoRegistry | None = None
    ontology_model: Ontology | None = None  # loaded once per process by the app
    # Searches and context packs off the API process (strata_api.heavy); None: built
    # for this request and run in a thread (contexts made outside the app, in tests).
    heavy: HeavyReads | None = None
    deadline: float = 0.0  # time.monotonic() value; 0: request_timeout_s from now
    # Why empty answers are empty (strata_api.graphql.absence): extensions.reasons.
    reasons: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.deadline:
            self.deadline = time.monotonic() + self.settings.request_timeout_s

    # -- the time budget --------------------------------------------------------------

    def deadline_remaining(self) -> float:
        """Seconds left (may be ≤ 0)."""
        return self.deadline - time.monotonic()

    def remaining(self) -> float:
        """Seconds left for a blocking call; RequestTimeout once the budget is spent."""
        left = self.deadline_remaining()
        if left <= _MIN_DB_TIMEOUT_S:
            raise request_timeout(self.settings)
        return left

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, timeout=<remaining budget>, **kwargs)`` off the event loop."""
        budget = self.remaining()
        try:
            return await asyncio.to_thread(fn, *args, timeout=budget, **kwargs)
        except DatabaseError as exc:
            raise timed_out(exc, self.settings) from exc

    async def read(self, text: str, **params: Any) -> list[dict[str, Any]]:
        """One Cypher read off the event loop, bounded by the remaining budget."""
        return await self.run(self.gateway.read, text, **params)

    # -- who is asking ----------------------------------------------------------------

    def readable_names(self) -> list[str] | None:
        """The readable repositories as a query parameter (None: every repository)."""
        readable = self.principal.readable_repos()
        return None if readable.all else sorted(readable.names)

    def page(self, first: int) -> int:
        """A page size within 1 and the server's cap (see :meth:`max_page`)."""
        return bounded("first", first, 1, self.max_page())

    def max_page(self) -> int:
        """The largest page any field serves: the setting, never above the core's cap."""
        return min(MAX_FIRST, int(self.settings.graphql_max_page_size))

    # -- services ---------------------------------------------------------------------

    @property
    def ontology(self) -> Ontology:
        if self.ontology_model is None:
            raise ConfigError("this context has no ontology")
        return self.ontology_model

    @property
    def code(self) -> CodeReads:
        return CodeReads(self.gateway, self.ontology)

    @property
    def graph(self) -> Reads:
        return Reads(self.gateway, self.ontology)

    @property
    def trace(self) -> TraceReads:
        return TraceReads(self.gateway)

    @property
    def heavy_reads(self) -> HeavyReads:
        """The app's heavy-read runner, or one in this process for a context made alone."""
        if self.heavy is None:
            from strata_api.heavy import HeavyReads

            settings = self.settings.model_copy(update={"api_heavy_workers": 0})
            self.heavy = HeavyReads(settings, self.gateway, self.ontology_model, self.registry)
        return self.heavy

    @property
    def jobs(self) -> JobStore:
        if self.job_store is None:
            raise ConfigError("this context has no job store")
        return self.job_store

    @property
    def tasks(self) -> TaskSender:
        if self.task_sender is None:
            raise ConfigError("this context has no task sender")
        return self.task_sender

    @property
    def repos(self) -> RepoRegistry:
        if self.registry is None:
            raise ConfigError("this context has no repository registry")
        return self.registry


Info = strawberry.Info[Context, None]
"""What every resolver receives: ``info.context`` is a :class:`Context`."""

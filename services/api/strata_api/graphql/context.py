"""The typed per-request context handed to every resolver.

Resolver authors use:

- ``info.context.principal``: who is calling (see :class:`strata.security.Principal`:
  ``can_read(repo)``, ``require("read", repo)``, ``readable_repos()``);
- ``await info.context.read(CYPHER, **params)`` / ``await info.context.read_tx(fn)``:
  a Neo4j read in a worker thread, with the request's remaining time budget as
  the transaction timeout, so a slow query is aborted in the database as well;
- ``info.context.remaining()``: that budget in seconds, for any other blocking
  call (raises :class:`RequestTimeout` once it is spent).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from strawberry.fastapi import BaseContext

from strata.errors import ConfigError, DatabaseError, StrataError
from strata.graph.gateway import Gateway, Tx
from strata.jobstore import JobStore
from strata.ontology.model import Ontology
from strata.registry import RepoRegistry
from strata.security import Principal
from strata.settings import Settings
from strata_api.graphql.errors import request_timeout
from strata_api.tasks import TaskSender

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
    ontology: Ontology | None = None  # loaded once per process by the app
    deadline: float = 0.0  # time.monotonic() value; 0: request_timeout_s from now

    def __post_init__(self) -> None:
        if not self.deadline:
            self.deadline = time.monotonic() + self.settings.request_timeout_s

    def deadline_remaining(self) -> float:
        """Seconds left (may be ≤ 0)."""
        return self.deadline - time.monotonic()

    def remaining(self) -> float:
        """Seconds left for a blocking call; RequestTimeout once the budget is spent."""
        left = self.deadline_remaining()
        if left <= _MIN_DB_TIMEOUT_S:
            raise request_timeout(self.settings)
        return left

    async def read(self, text: str, **params: Any) -> list[dict[str, Any]]:
        """One Cypher read off the event loop, bounded by the remaining budget."""
        budget = self.remaining()
        try:
            return await asyncio.to_thread(self.gateway.read, text, timeout=budget, **params)
        except DatabaseError as exc:
            raise self._timed_out(exc) from exc

    async def read_tx(self, fn: Callable[[Tx], T]) -> T:
        """A read transaction function off the event loop, bounded by the remaining budget."""
        budget = self.remaining()
        try:
            return await asyncio.to_thread(self.gateway.read_tx, fn, timeout=budget)
        except DatabaseError as exc:
            raise self._timed_out(exc) from exc

    def _timed_out(self, exc: DatabaseError) -> StrataError:
        """Neo4j ended the transaction at our timeout: that is the request's budget."""
        if "TransactionTimedOut" in str(exc.details.get("gql_status") or ""):
            return request_timeout(self.settings)
        return exc

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

"""What every task shares: job records, error translation, the repository, a lock."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from strata.errors import DatabaseUnavailable, NotFound, StrataError
from strata.git import Git, open_repository
from strata.registry import RepoRegistration
from strata_workers.context import WorkerContext, worker_context

# Transient database trouble is retried with backoff (always shorter than the
# visibility timeout, so Redis never redelivers a task that is still waiting).
RETRY: dict[str, Any] = {
    "autoretry_for": (DatabaseUnavailable,),
    "retry_backoff": 5,
    "retry_backoff_max": 300,
    "max_retries": 8,
}
LOCK_TIMEOUT_S = 3600


@contextmanager
def job_run(task: Any, job_id: str) -> Iterator[WorkerContext]:
    """Mark the job running; record a failure (final, or before a retry) and re-raise."""
    ctx = worker_context(task.app.conf.strata_settings)
    ctx.jobs.start(job_id)
    try:
        yield ctx
    except DatabaseUnavailable as exc:
        ctx.jobs.fail(job_id, exc.to_dict(), final=task.request.retries >= task.max_retries)
        raise
    except StrataError as exc:
        ctx.jobs.fail(job_id, exc.to_dict())
        raise


def registered_repository(ctx: WorkerContext, name: str) -> tuple[RepoRegistration, Git]:
    """The registration and a readable git repository (its path, or a fetched mirror)."""
    registration = ctx.registry.get(name)
    if registration is None:
        raise NotFound(f"repository {name!r} is not registered")
    git = open_repository(
        registration.name,
        url=registration.url,
        path=registration.path,
        mirrors=ctx.settings.mirrors_dir,
    )
    return registration, git


@contextmanager
def repository_lock(ctx: WorkerContext, key: str, what: str) -> Iterator[None]:
    """One writer at a time per repository and layer (waits up to 10 minutes)."""
    lock = ctx.redis.lock(f"strata:lock:{key}", timeout=LOCK_TIMEOUT_S, blocking_timeout=600)
    if not lock.acquire():
        raise DatabaseUnavailable(f"another {what} is still running")
    try:
        yield
    finally:
        lock.release()


def throttled_progress(
    ctx: WorkerContext, job_id: str, every_s: float, *, always: tuple[str, ...] = ("done",)
) -> Callable[[str, dict[str, Any]], None]:
    """A progress callback that writes the job record at most every ``every_s`` seconds
    (phases in ``always`` are written at once); only plain counters are kept."""
    last = 0.0

    def report(phase: str, counters: dict[str, Any]) -> None:
        nonlocal last
        now = time.monotonic()
        if phase in always or now - last >= every_s:
            last = now
            numbers = {k: v for k, v in counters.items() if isinstance(v, int | float | str)}
            ctx.jobs.progress(job_id, phase=phase, **numbers)

    return report

"""The trace queue: settle requirement links after every push."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.code.mirror import open_repository
from strata.errors import DatabaseUnavailable, NotFound, StrataError
from strata.graph.store import FactStore
from strata.jobs import TRACE_SETTLE, FollowUpJob, parse_job
from strata.trace.sync import TraceSync
from strata_workers.context import worker_context


@shared_task(
    name=TRACE_SETTLE,
    bind=True,
    autoretry_for=(DatabaseUnavailable,),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=8,
)
def settle(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Check declared links, derive proposals, and mark links whose target moved STALE."""
    parsed = parse_job(FollowUpJob, job)
    ctx = worker_context(self.app.conf.strata_settings)
    ctx.jobs.start(parsed.job_id)
    try:
        registration = ctx.registry.get(parsed.repo)
        if registration is None:
            raise NotFound(f"repository {parsed.repo!r} is not registered")
        git = open_repository(registration.name, url=registration.url, path=registration.path,
                              mirrors=ctx.settings.mirrors_dir)
        lock = ctx.redis.lock(f"strata:lock:trace:{parsed.repo}", timeout=3600,
                              blocking_timeout=600)
        if not lock.acquire():
            raise DatabaseUnavailable(f"another trace settle of {parsed.repo} is still running")
        try:
            result = TraceSync(FactStore(ctx.gateway, ctx.ontology), ctx.gateway).sync(
                git, parsed.repo, parsed.ref.removeprefix("refs/heads/"), parsed.commit,
                base=parsed.base, changed_symbols=parsed.changed_symbols,
            )
        finally:
            lock.release()
    except DatabaseUnavailable as exc:
        ctx.jobs.fail(parsed.job_id, exc.to_dict(), final=self.request.retries >= self.max_retries)
        raise
    except StrataError as exc:
        ctx.jobs.fail(parsed.job_id, exc.to_dict())
        raise
    summary = result.as_dict()
    ctx.jobs.succeed(parsed.job_id, summary)
    return summary

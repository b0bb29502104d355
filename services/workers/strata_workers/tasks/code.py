"""The code queue: reindex a repository from a push (or a request)."""

from __future__ import annotations

import time
from typing import Any

from celery import shared_task

from strata.code.mirror import open_repository
from strata.errors import DatabaseUnavailable, NotFound, StrataError
from strata.jobs import CODE_REINDEX, KNOWLEDGE_SYNC, ReindexJob, parse_job
from strata_workers.context import worker_context
from strata_workers.followups import send_followup

LOCK_TIMEOUT_S = 3600
PROGRESS_EVERY_S = 0.5


@shared_task(
    name=CODE_REINDEX,
    bind=True,
    autoretry_for=(DatabaseUnavailable,),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=8,
)
def reindex(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Index ``job.after`` of ``job.repo``; idempotent (a repeat changes nothing)."""
    parsed = parse_job(ReindexJob, job)
    ctx = worker_context(self.app.conf.strata_settings)
    ctx.jobs.start(parsed.job_id)
    try:
        registration = ctx.registry.get(parsed.repo)
        if registration is None:
            raise NotFound(f"repository {parsed.repo!r} is not registered")
        git = open_repository(
            registration.name, url=registration.url, path=registration.path,
            mirrors=ctx.settings.mirrors_dir,
        )
        ref = parsed.ref.removeprefix("refs/heads/")
        lock = ctx.redis.lock(
            f"strata:lock:code:{parsed.repo}:{ref}", timeout=LOCK_TIMEOUT_S, blocking_timeout=600
        )
        if not lock.acquire():
            raise DatabaseUnavailable(f"another reindex of {parsed.repo}/{ref} is still running")
        try:
            result = ctx.code.indexer(_progress(ctx, parsed.job_id)).index(
                git, parsed.repo, ref, parsed.after
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
    if result.mode != "unchanged" and ref == registration.default_branch:
        # Requirements, decisions and trace links follow the default branch only.
        summary["next_job"] = send_followup(
            self.app, ctx, KNOWLEDGE_SYNC, queue=ctx.settings.queue_knowledge, repo=parsed.repo,
            ref=ref, commit=result.commit, base=result.base,
            changed_symbols=result.changed_symbols,
        )
    ctx.jobs.succeed(parsed.job_id, summary)
    return summary


def _progress(ctx: Any, job_id: str) -> Any:
    last = 0.0

    def report(phase: str, counters: dict[str, Any]) -> None:
        nonlocal last
        now = time.monotonic()
        if phase == "done" or now - last >= PROGRESS_EVERY_S:
            last = now
            ctx.jobs.progress(job_id, phase=phase, **{
                k: v for k, v in counters.items() if isinstance(v, int | float | str)
            })

    return report

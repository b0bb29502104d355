"""The code queue: reindex a repository from a push (or a request)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.jobs import CODE_REINDEX, KNOWLEDGE_SYNC, ReindexJob, parse_job
from strata_workers.followups import send_followup
from strata_workers.runner import (
    RETRY,
    job_run,
    registered_repository,
    repository_lock,
    throttled_progress,
)

PROGRESS_EVERY_S = 0.5


@shared_task(name=CODE_REINDEX, bind=True, **RETRY)
def reindex(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Index ``job.after`` of ``job.repo``; idempotent (a repeat changes nothing)."""
    parsed = parse_job(ReindexJob, job)
    with job_run(self, parsed.job_id) as ctx:
        registration, git = registered_repository(ctx, parsed.repo)
        ref = parsed.ref.removeprefix("refs/heads/")
        with repository_lock(ctx, f"code:{parsed.repo}:{ref}", f"reindex of {parsed.repo}/{ref}"):
            result = ctx.code.indexer(
                throttled_progress(ctx, parsed.job_id, PROGRESS_EVERY_S)
            ).index(git, parsed.repo, ref, parsed.after)
    summary = result.as_dict()
    if result.mode != "unchanged" and ref == registration.default_branch:
        # Requirements, decisions and trace links follow the default branch only.
        summary["next_job"] = send_followup(
            self.app,
            ctx,
            KNOWLEDGE_SYNC,
            queue=ctx.settings.queue_knowledge,
            repo=parsed.repo,
            ref=ref,
            commit=result.commit,
            base=result.base,
            changed_symbols=result.changed_symbols,
        )
    ctx.jobs.succeed(parsed.job_id, summary)
    # The cache write ran beside the follow-up; it ends before the task does, so a
    # pool child recycled after this task cannot take it down half done.
    ctx.code.cache.flush()
    return summary

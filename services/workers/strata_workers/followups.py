"""The chain after a push: code.reindex -> knowledge.sync -> trace.settle.

Each step is its own task on its own queue (one writer per layer); a step
records a job and sends the next one by name when it succeeded.
"""

from __future__ import annotations

from typing import Any

from strata.jobs import MAX_CHANGED_SYMBOLS, FollowUpJob
from strata.jobstore import new_job_id
from strata_workers.context import WorkerContext


def send_followup(
    app: Any,
    ctx: WorkerContext,
    task: str,
    *,
    queue: str,
    repo: str,
    ref: str,
    commit: str,
    base: str | None,
    changed_symbols: list[str],
) -> str:
    """Record and send the next step; returns its job id."""
    job = FollowUpJob(
        job_id=new_job_id(),
        repo=repo,
        ref=ref,
        commit=commit,
        base=base,
        changed_symbols=changed_symbols[:MAX_CHANGED_SYMBOLS],
    )
    ctx.jobs.create(
        task.removeprefix("strata."), repo, job_id=job.job_id, params={"ref": ref, "after": commit}
    )
    app.send_task(
        task, kwargs={"job": job.model_dump(mode="json")}, queue=queue, task_id=job.job_id
    )
    return job.job_id


def send_next(
    app: Any,
    ctx: WorkerContext,
    task: str,
    after: FollowUpJob,
    *,
    queue: str,
    changed_symbols: list[str] | None = None,
) -> str:
    """Send the step that follows the follow-up ``after``, for the same push."""
    return send_followup(
        app,
        ctx,
        task,
        queue=queue,
        repo=after.repo,
        ref=after.ref,
        commit=after.commit,
        base=after.base,
        changed_symbols=changed_symbols or [],
    )

"""The trace queue: settle requirement links after every push."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.graph.store import FactStore
from strata.jobs import KNOWLEDGE_CARDS, TRACE_SETTLE, FollowUpJob, parse_job
from strata.trace.sync import TraceSync
from strata_workers.followups import send_next
from strata_workers.runner import RETRY, job_run, registered_repository, repository_lock


@shared_task(name=TRACE_SETTLE, bind=True, **RETRY)
def settle(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Check declared links, derive proposals, and mark links whose target moved STALE."""
    parsed = parse_job(FollowUpJob, job)
    with job_run(self, parsed.job_id) as ctx:
        _, git = registered_repository(ctx, parsed.repo)
        with repository_lock(ctx, f"trace:{parsed.repo}", f"trace settle of {parsed.repo}"):
            result = TraceSync(FactStore(ctx.gateway, ctx.ontology), ctx.gateway).sync(
                git,
                parsed.repo,
                parsed.ref.removeprefix("refs/heads/"),
                parsed.commit,
                base=parsed.base,
                changed_symbols=parsed.changed_symbols,
            )
    summary = result.as_dict()
    # The counts as the job's progress too: a finished sync reports what it did.
    ctx.jobs.progress(
        parsed.job_id,
        **{k: v for k, v in summary.items() if k != "findings"},
        findings=len(result.findings),
    )
    ctx.jobs.succeed(parsed.job_id, summary)
    # Cards read the links just settled: they follow last (knowledge queue).
    send_next(self.app, ctx, KNOWLEDGE_CARDS, parsed, queue=ctx.settings.queue_knowledge)
    return summary

"""The knowledge queue: requirements and decisions from the repository's files."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.graph.store import FactStore
from strata.jobs import KNOWLEDGE_EMBED, KNOWLEDGE_SYNC, TRACE_SETTLE, FollowUpJob, parse_job
from strata.knowledge.sync import KnowledgeSync
from strata_workers.followups import send_next
from strata_workers.runner import RETRY, job_run, registered_repository, repository_lock


@shared_task(name=KNOWLEDGE_SYNC, bind=True, **RETRY)
def sync(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Parse requirement and ADR files at ``job.commit`` and re-sync their facts."""
    parsed = parse_job(FollowUpJob, job)
    with job_run(self, parsed.job_id) as ctx:
        _, git = registered_repository(ctx, parsed.repo)
        with repository_lock(ctx, f"knowledge:{parsed.repo}", f"sync of {parsed.repo}"):
            result = KnowledgeSync(FactStore(ctx.gateway, ctx.ontology), ctx.gateway).sync(
                git, parsed.repo, parsed.commit
            )
    summary = result.as_dict()
    # The counts as the job's progress too: a finished sync reports what it did.
    ctx.jobs.progress(
        parsed.job_id,
        **{k: v for k, v in summary.items() if k != "findings"},
        findings=len(result.findings),
    )
    ctx.jobs.succeed(parsed.job_id, summary)
    send_next(
        self.app,
        ctx,
        TRACE_SETTLE,
        parsed,
        queue=ctx.settings.queue_trace,
        changed_symbols=parsed.changed_symbols,
    )
    # Vectors for the search documents the push wrote, off every request path: a
    # search embeds only a few itself, so without this the vector retriever sees
    # a large push's documents only after many searches.
    send_next(self.app, ctx, KNOWLEDGE_EMBED, parsed, queue=ctx.settings.queue_knowledge)
    return summary

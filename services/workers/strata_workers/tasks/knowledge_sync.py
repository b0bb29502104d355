"""The knowledge queue: requirements and decisions from the repository's files."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.code.mirror import open_repository
from strata.errors import DatabaseUnavailable, NotFound, StrataError
from strata.graph.store import FactStore
from strata.jobs import KNOWLEDGE_SYNC, TRACE_SETTLE, FollowUpJob, parse_job
from strata.knowledge.sync import KnowledgeSync
from strata_workers.context import worker_context
from strata_workers.followups import send_followup


@shared_task(
    name=KNOWLEDGE_SYNC,
    bind=True,
    autoretry_for=(DatabaseUnavailable,),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=8,
)
def sync(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Parse requirement and ADR files at ``job.commit`` and re-sync their facts."""
    parsed = parse_job(FollowUpJob, job)
    ctx = worker_context(self.app.conf.strata_settings)
    ctx.jobs.start(parsed.job_id)
    try:
        registration = ctx.registry.get(parsed.repo)
        if registration is None:
            raise NotFound(f"repository {parsed.repo!r} is not registered")
        git = open_repository(registration.name, url=registration.url, path=registration.path,
                              mirrors=ctx.settings.mirrors_dir)
        result = KnowledgeSync(FactStore(ctx.gateway, ctx.ontology), ctx.gateway).sync(
            git, parsed.repo, parsed.commit
        )
    except DatabaseUnavailable as exc:
        ctx.jobs.fail(parsed.job_id, exc.to_dict(), final=self.request.retries >= self.max_retries)
        raise
    except StrataError as exc:
        ctx.jobs.fail(parsed.job_id, exc.to_dict())
        raise
    summary = result.as_dict()
    ctx.jobs.succeed(parsed.job_id, summary)
    send_followup(
        self.app, ctx, TRACE_SETTLE, queue=ctx.settings.queue_trace, repo=parsed.repo,
        ref=parsed.ref, commit=parsed.commit, base=parsed.base,
        changed_symbols=parsed.changed_symbols,
    )
    return summary

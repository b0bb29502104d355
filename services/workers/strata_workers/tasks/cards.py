"""The knowledge queue: rebuild the knowledge cards a push made stale (after trace.settle)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.cards import CardService
from strata.jobs import KNOWLEDGE_CARDS, FollowUpJob, parse_job
from strata_workers.runner import RETRY, job_run, registered_repository, repository_lock


@shared_task(name=KNOWLEDGE_CARDS, bind=True, **RETRY)
def cards(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Recompile, as of ``job.commit``, only the cards whose sources changed; idempotent."""
    parsed = parse_job(FollowUpJob, job)
    ref = parsed.ref.removeprefix("refs/heads/")
    with job_run(self, parsed.job_id) as ctx:
        _, git = registered_repository(ctx, parsed.repo)
        with repository_lock(ctx, f"cards:{parsed.repo}:{ref}", f"cards of {parsed.repo}"):
            built, fresh = CardService(ctx.gateway, ctx.ontology).refresh(
                parsed.repo, ref, parsed.commit, git=git
            )
    summary = {"rebuilt": sorted(c.name for c in built), "fresh": fresh, "commit": parsed.commit}
    ctx.jobs.succeed(parsed.job_id, summary)
    return summary

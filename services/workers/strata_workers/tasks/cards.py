"""The knowledge queue: rebuild the knowledge cards a push made stale (after trace.settle)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.cards import CardService
from strata.cards.pipeline import CardPipeline
from strata.cards.prose import ProseWriter
from strata.cards.spans import Steps, flush, tracer_for
from strata.jobs import KNOWLEDGE_CARDS, FollowUpJob, parse_job
from strata_workers.runner import RETRY, job_run, registered_repository, repository_lock


@shared_task(name=KNOWLEDGE_CARDS, bind=True, **RETRY)
def cards(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Recompile, as of ``job.commit``, only the cards that need it (with model prose
    when ``STRATA_CARDS_PROSE`` is on); idempotent, and resumed after a kill."""
    parsed = parse_job(FollowUpJob, job)
    ref = parsed.ref.removeprefix("refs/heads/")
    with job_run(self, parsed.job_id) as ctx:
        # the app's settings: the process's shared context may predate this app (tests)
        settings = self.app.conf.strata_settings
        _, git = registered_repository(ctx, parsed.repo)

        def progress(done: int, total: int, card: Any) -> None:
            ctx.jobs.progress(parsed.job_id, phase="cards", done=done, total=total, last=card.name)

        pipeline = CardPipeline(
            CardService(ctx.gateway, ctx.ontology),
            prose=ProseWriter.from_settings(settings) if settings.cards_prose else None,
            steps=Steps(tracer_for(settings)),
            progress=progress,
        )
        with repository_lock(ctx, f"cards:{parsed.repo}:{ref}", f"cards of {parsed.repo}"):
            try:
                result = pipeline.run(parsed.repo, ref, parsed.commit, git=git)
            finally:
                flush(settings)
    summary = result.summary()
    ctx.jobs.succeed(parsed.job_id, summary)
    return summary

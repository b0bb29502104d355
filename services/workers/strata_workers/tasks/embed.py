"""The knowledge queue: vectors for a repository's search documents, after a push.

The code worker writes search documents without vectors (it has no embedder and
must answer the push fast); this task embeds every document still pending, in
chunks, reporting progress on its job. Idempotent: a document is embedded once,
a repeat finds nothing pending; two runs at once take turns on a lock.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.jobs import KNOWLEDGE_EMBED, FollowUpJob, parse_job
from strata.search.docs import SearchIndex, embedder_for
from strata_workers.runner import RETRY, job_run, repository_lock

CHUNK = 512  # documents between two progress reports (~2-5 s of encoding)


@shared_task(name=KNOWLEDGE_EMBED, bind=True, **RETRY)
def embed(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Embed the pending search documents of ``job.repo``."""
    parsed = parse_job(FollowUpJob, job)
    with job_run(self, parsed.job_id) as ctx:
        embedder = embedder_for(ctx.settings)
        if embedder is None:
            summary: dict[str, Any] = {"embedded": 0, "left": 0, "skipped": "no embedder"}
            ctx.jobs.succeed(parsed.job_id, summary)
            return summary
        index = SearchIndex(ctx.gateway, embedder)
        done, seconds = 0, 0.0
        with repository_lock(ctx, f"embed:{parsed.repo}", f"embedding of {parsed.repo}"):
            while True:
                embedded, left, took = index.embed_pending(parsed.repo, budget=CHUNK)
                done, seconds = done + embedded, seconds + took
                ctx.jobs.progress(parsed.job_id, phase="embedding", embedded=done, left=left)
                if embedded < CHUNK or left == 0:
                    break
        summary = {"embedded": done, "left": 0, "seconds": round(seconds, 2)}
        ctx.jobs.succeed(parsed.job_id, summary)
        return summary

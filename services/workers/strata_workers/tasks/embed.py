"""The knowledge queue: vectors for a repository's search documents, after a push.

The code worker writes search documents without vectors (it has no embedder and
must answer the push fast); this task embeds the documents still pending, in
chunks, reporting progress on its job. One job embeds at most :data:`JOB_CHUNKS`
chunks and, if documents are left, sends the next embed job, which queues
behind whatever came meanwhile: a full push of a large repository (45k
documents, minutes on 2 cores) no longer holds the knowledge queue, so the
requirements sync of a push that follows runs after one such job, not after
all of them. Idempotent: a document is embedded once, a repeat finds nothing
pending; two runs at once take turns on a lock.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.jobs import KNOWLEDGE_EMBED, FollowUpJob, parse_job
from strata.search.docs import SearchIndex, embedder_for
from strata_workers.followups import send_next
from strata_workers.runner import RETRY, job_run, repository_lock

CHUNK = 512  # documents between two progress reports (~2-5 s of encoding)
JOB_CHUNKS = 8  # chunks per job (~4k documents, tens of seconds); the rest in the next job


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
        done, left, seconds = 0, 0, 0.0
        with repository_lock(ctx, f"embed:{parsed.repo}", f"embedding of {parsed.repo}"):
            for _ in range(JOB_CHUNKS):
                embedded, left, took = index.embed_pending(parsed.repo, budget=CHUNK)
                done, seconds = done + embedded, seconds + took
                ctx.jobs.progress(parsed.job_id, phase="embedding", embedded=done, left=left)
                if embedded < CHUNK or left == 0:  # nothing left (it counts only at a full chunk)
                    break
        summary = {"embedded": done, "left": left, "seconds": round(seconds, 2)}
        if left:
            # Behind what queued meanwhile (a later push's sync), not ahead of it.
            summary["next_job"] = send_next(
                self.app, ctx, KNOWLEDGE_EMBED, parsed, queue=ctx.settings.queue_knowledge
            )
        ctx.jobs.succeed(parsed.job_id, summary)
        return summary

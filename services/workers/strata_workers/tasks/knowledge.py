"""The knowledge queue: ingest a repository's documents through graphiti (opt-in).

A thin wrapper over :func:`strata.knowledge.ingest.ingest_documents`: it reads
the repository at the job's commit, ingests one document after another, and
keeps the job record current (progress, tokens, outcome). A transient failure
(model endpoint down or too slow, Neo4j unavailable) retries the task with a
backoff shorter than the broker's visibility timeout; documents already done
are no-ops the second time. A document the model cannot handle (invalid
output) fails the job with the reason per document, after the others are done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from celery import shared_task

from strata.errors import ConfigError, StrataError
from strata.jobs import KNOWLEDGE_INGEST, IngestJob, parse_job
from strata_workers.context import WorkerContext
from strata_workers.runner import (
    public_error,
    registered_repository,
    repository_lock,
    throttled_progress,
    tracked,
)

if TYPE_CHECKING:  # imported lazily at run time: the extra may be missing on this worker
    from strata.knowledge.ingest import IngestSummary

PROGRESS_EVERY_S = 1.0
MAX_RETRIES = 5
BACKOFF_S = 30
BACKOFF_MAX_S = 600


class DocumentsFailed(StrataError):
    """Some documents could not be ingested (each with its reason); the others were."""

    code = "documents_failed"


def backoff(retries: int, visibility_timeout_s: int) -> int:
    """Seconds before retry ``retries + 1``: doubling, capped, and always well inside the
    visibility timeout (a longer countdown makes Redis redeliver the task early)."""
    return int(min(BACKOFF_S * 2**retries, BACKOFF_MAX_S, visibility_timeout_s // 4))


@shared_task(name=KNOWLEDGE_INGEST, bind=True, max_retries=MAX_RETRIES)
def ingest(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Ingest the documents of ``job.repo`` at ``job.commit``; idempotent per document."""
    parsed = parse_job(IngestJob, job)
    with tracked(self, parsed.job_id) as ctx:
        try:
            summary = _run(ctx, parsed)
        except StrataError as exc:
            final = not exc.retryable or self.request.retries >= self.max_retries
            ctx.jobs.fail(parsed.job_id, public_error(exc), final=final)
            if final:
                raise
            delay = backoff(self.request.retries, ctx.settings.visibility_timeout_s)
            raise self.retry(exc=exc, countdown=delay) from exc
    result = summary.as_dict()
    if summary.failed:
        error = DocumentsFailed(
            f"{len(summary.failed)} of {summary.selected} document(s) could not be ingested: "
            + "; ".join(f"{f['path']}: {f['message']}" for f in summary.failed[:5]),
            documents=summary.failed[:50],
            ingested=summary.count("ingested"),
            tokens=summary.tokens,
        )
        ctx.jobs.fail(parsed.job_id, error.to_dict())
        raise error
    ctx.jobs.succeed(parsed.job_id, result)
    return result


def _run(ctx: WorkerContext, parsed: IngestJob) -> IngestSummary:
    try:
        from strata.knowledge.ingest import ingest_documents
    except ImportError as exc:  # the worker image was built without the extra
        raise ConfigError(
            f"document ingestion needs the `knowledge` extra: {exc}",
            hint="install strata[knowledge] on the knowledge workers",
        ) from exc
    _, git = registered_repository(ctx, parsed.repo)
    # graphiti wants one partition's episodes added one at a time.
    with repository_lock(ctx, f"knowledge:{parsed.repo}", f"document ingest of {parsed.repo}"):
        return ingest_documents(
            ctx.settings,
            ctx.gateway,
            ctx.ontology,
            git=git,
            repo=parsed.repo,
            commit=parsed.commit,
            globs=parsed.paths or None,
            progress=throttled_progress(
                ctx, parsed.job_id, PROGRESS_EVERY_S, always=("selected", "done")
            ),
        )

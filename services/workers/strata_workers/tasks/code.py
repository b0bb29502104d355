"""The code queue: reindex a repository from a push (or a request)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import structlog
from celery import shared_task

from strata import locks
from strata.code.result import IndexResult
from strata.code.run import Clock
from strata.errors import NotFound, StrataError
from strata.jobs import CODE_REINDEX, KNOWLEDGE_SYNC, ZERO_SHAS, ReindexJob, parse_job
from strata.search.bodies import registered_blob_source
from strata.search.docs import SearchIndex
from strata_workers.context import WorkerContext
from strata_workers.followups import send_followup
from strata_workers.runner import (
    RETRY,
    job_run,
    registered_repository,
    repository_lock,
    throttled_progress,
)

PROGRESS_EVERY_S = 0.5
# A push that changed at most this many nodes documents just those (key lookups);
# a larger one (a full index) scans what was recorded since the search cursor.
NODE_DOCS_MAX = 5000
log = structlog.get_logger(component="code-task")


def _search_documents(ctx: WorkerContext, repo: str, result: IndexResult) -> int | None:
    """Write the search documents of what this run recorded, so the first search after a
    push does not pay for them (embeddings stay lazy: `strata search --embed`).

    They are derived data: a failure here is logged and left to the next search,
    which writes what is missing; it does not fail the reindex.
    """
    try:
        # The worker's own mirrors folder (settings built once per process, not per push).
        blobs = registered_blob_source(ctx.gateway, ctx.settings.mirrors_dir)
        index = SearchIndex(ctx.gateway, blobs=blobs)
        if result.mode == "incremental" and len(result.changed_nodes) <= NODE_DOCS_MAX:
            return index.sync_nodes(result.changed_nodes)
        return index.sync(repo, embed_budget=0).documents
    except StrataError as exc:
        log.warning("search.documents_deferred", repo=repo, error=exc.message)
        return None


@shared_task(name=CODE_REINDEX, bind=True, **RETRY)
def reindex(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Index ``job.after`` of ``job.repo`` (all zeros: the ref was deleted, its facts
    close); idempotent (a repeat changes nothing)."""
    parsed = parse_job(ReindexJob, job)
    clock = Clock()
    with job_run(self, parsed.job_id) as ctx:
        # The push's arrival (the record is made when the API receives it): the
        # moment a force push moved the ref, or a deletion removed it.
        moved_at = ctx.jobs.get(parsed.job_id).created_at
        queued = max(0.0, (datetime.now(UTC) - moved_at).total_seconds())
        ref = parsed.ref.removeprefix("refs/heads/")
        progress = throttled_progress(ctx, parsed.job_id, PROGRESS_EVERY_S)
        lock = locks.lock_key("code", parsed.repo, ref)  # the CLI takes the same
        if parsed.after in ZERO_SHAS:
            if ctx.registry.get(parsed.repo) is None:
                raise NotFound(f"repository {parsed.repo!r} is not registered")
            with repository_lock(ctx, lock, f"deletion of {parsed.repo}/{ref}"):
                result = ctx.code.indexer(progress).delete_branch(parsed.repo, ref, at=moved_at)
            summary = result.as_dict()
            ctx.jobs.succeed(parsed.job_id, summary)
            return summary
        registration, git = registered_repository(ctx, parsed.repo, want=parsed.after)
        clock.lap("open")  # the registration, and the mirror fetched (or the path checked)
        with repository_lock(ctx, lock, f"reindex of {parsed.repo}/{ref}"):
            # Looked at under the lock: a later push of this ref that got here first
            # (two pushes run at once, or this is a late redelivery) already moved the
            # graph past this commit; indexing it now would read as a rewind.
            newer = ctx.jobs.superseded_by(parsed.job_id)
            if newer is not None:
                skipped = {"repo": parsed.repo, "ref": ref, "commit": parsed.after}
                skipped |= {"mode": "superseded", "superseded_by": newer.id}
                ctx.jobs.succeed(parsed.job_id, skipped)
                return skipped
            clock.lap("lock")
            result = ctx.code.indexer(progress).index(
                git, parsed.repo, ref, parsed.after, moved_at=moved_at
            )
            clock.lap("index")
        # Still inside the run: the heartbeat goes on and a failure ends the job FAILED.
        # A full index of Django writes 45k search documents here (13-27 s on a fresh
        # graph); outside it, the job read as lost after 60 s without a beat.
        summary = result.as_dict()
        # The documents first, then the follow-ups: sent before, a full Django push's
        # card rebuild (~12 s) and trace settle ran beside its 45k documents, on the
        # same two cores, and the job that makes the code searchable ended later.
        summary["search_documents"] = _search_documents(ctx, parsed.repo, result)
        clock.lap("documents")
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
        clock.lap("followup")
        # Where the job's time went outside the index's own phases (``seconds``):
        # from the push's arrival to this task's start, then each step of the task.
        summary["task_seconds"] = {"queued": round(queued, 4), **clock.done()}
        ctx.jobs.succeed(parsed.job_id, summary)
    # The cache write ran beside the follow-up; it ends before the task does, so a
    # pool child recycled after this task cannot take it down half done.
    ctx.code.cache.flush()
    # After the answer: the next push starts on a settled heap, its plan's memos warm,
    # and its reads planned.
    ctx.code.settle(parsed.repo, ref)
    _warm_push(ctx, result.created)
    return summary


def _warm_push(ctx: WorkerContext, written: int) -> None:
    """Plan the next push's reads of its open facts (and, after a run that wrote
    ``written`` versions, enough to move Neo4j's statistics, its fact writes), and
    the read and writes of its documents, now (a few ms once planned; ~0.8 s on the
    first push after a full index otherwise); a failure costs only the next push
    that time, so it is logged, never raised."""
    try:
        ctx.code.warm_push(written)
        SearchIndex(ctx.gateway).warm_push_statements()
    except StrataError as exc:
        log.warning("push_statements.warm_failed", error=exc.message)

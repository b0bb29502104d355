"""Sending tasks by name: the API never imports worker code.

A job record is created first (so ``job(id)`` answers at once), then the task
is sent with the same id; if the broker refuses, the record is marked failed
and the caller gets a 503.
"""

from __future__ import annotations

import contextlib
from typing import Any

import redis
from celery import Celery

from strata.errors import StrataError
from strata.jobs import (
    CODE_REINDEX,
    KNOWLEDGE_INGEST,
    IngestJob,
    Job,
    ReindexJob,
    RepoJob,
    parse_job,
)
from strata.jobstore import JobRecord, JobStore, new_job_id
from strata.settings import Settings


class QueueUnavailable(StrataError):
    """Redis (task broker and job records) did not answer; worth retrying."""

    code = "queue_unavailable"
    http_status = 503
    retryable = True
    public = True  # our own message: safe to show in production


class TaskSender:
    """A Celery client with only a broker: it sends, it never runs tasks."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._celery: Any = Celery("strata-api", broker=settings.redis_url, set_as_current=False)
        self._celery.conf.update(
            task_serializer="json",
            accept_content=["json"],
            broker_transport_options={"visibility_timeout": settings.visibility_timeout_s},
            broker_connection_timeout=2.0,
            task_publish_retry_policy={
                "max_retries": 2,
                "interval_start": 0.1,
                "interval_step": 0.2,
                "interval_max": 0.5,
            },
        )

    def send(self, name: str, payload: Job, *, queue: str, task_id: str | None = None) -> None:
        """Send task ``name`` with ``payload`` (validated JSON) to ``queue`` (blocking)."""
        self._celery.send_task(
            name, kwargs={"job": payload.model_dump(mode="json")}, queue=queue, task_id=task_id
        )

    def close(self) -> None:
        self._celery.close()

    def reindex(
        self,
        jobs: JobStore,
        *,
        repo: str,
        ref: str,
        after: str,
        before: str | None = None,
        forced: bool = False,
        delivery: str | None = None,
        source: str = "api",
    ) -> JobRecord:
        """Record and send one ``strata.code.reindex`` job (blocking; run in a thread)."""
        job_id = new_job_id()
        payload = parse_job(
            ReindexJob,
            {
                "job_id": job_id,
                "repo": repo,
                "ref": ref,
                "after": after,
                "before": before,
                "delivery": delivery,
                "forced": forced,
            },
        )
        params = payload.model_dump(mode="json", exclude={"job_id", "repo"}) | {"source": source}
        return self._enqueue(
            jobs, CODE_REINDEX, payload, queue=self._settings.queue_code, params=params
        )

    def ingest(
        self,
        jobs: JobStore,
        *,
        repo: str,
        ref: str,
        commit: str,
        paths: list[str],
        source: str,
    ) -> JobRecord:
        """Record and send one ``strata.knowledge.ingest`` job (blocking; run in a thread)."""
        job_id = new_job_id()
        payload = parse_job(
            IngestJob,
            {"job_id": job_id, "repo": repo, "ref": ref, "commit": commit, "paths": paths},
        )
        params = {"ref": ref, "after": commit, "paths": paths, "source": source}
        return self._enqueue(
            jobs, KNOWLEDGE_INGEST, payload, queue=self._settings.queue_knowledge, params=params
        )

    def _enqueue(
        self, jobs: JobStore, task: str, payload: RepoJob, *, queue: str, params: dict[str, Any]
    ) -> JobRecord:
        """Record the job, then send it with the same id; a refused send fails the record."""
        try:
            record = jobs.create(
                task.removeprefix("strata."), payload.repo, job_id=payload.job_id, params=params
            )
        except redis.RedisError as exc:
            raise QueueUnavailable("the job store is unavailable; nothing was enqueued") from exc
        try:
            self.send(task, payload, queue=queue, task_id=payload.job_id)
        except Exception as exc:  # kombu/redis raise many types; all mean "not queued"
            with contextlib.suppress(redis.RedisError):
                jobs.fail(
                    payload.job_id, {"code": QueueUnavailable.code, "message": "could not enqueue"}
                )
            raise QueueUnavailable(
                "the task queue is unavailable; nothing was enqueued", hint="retry later"
            ) from exc
        return record

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
from strata.jobs import CODE_REINDEX, Job, ReindexJob, parse_job
from strata.jobstore import JobRecord, JobStore, new_job_id
from strata.settings import Settings

REINDEX_KIND = "code.reindex"


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
        try:
            record = jobs.create(REINDEX_KIND, repo, job_id=job_id, params=params)
        except redis.RedisError as exc:
            raise QueueUnavailable("the job store is unavailable; nothing was enqueued") from exc
        try:
            self.send(CODE_REINDEX, payload, queue=self._settings.queue_code, task_id=job_id)
        except Exception as exc:  # kombu/redis raise many types; all mean "not queued"
            with contextlib.suppress(redis.RedisError):
                jobs.fail(job_id, {"code": QueueUnavailable.code, "message": "could not enqueue"})
            raise QueueUnavailable(
                "the task queue is unavailable; nothing was enqueued", hint="retry later"
            ) from exc
        return record

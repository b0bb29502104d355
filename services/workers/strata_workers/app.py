"""The Celery application, built from settings with at-least-once delivery."""

from __future__ import annotations

from celery import Celery

from strata.jobs import KNOWLEDGE_LINT
from strata.settings import Settings

TASK_MODULES = (
    "strata_workers.tasks.ops",
    "strata_workers.tasks.code",
    "strata_workers.tasks.knowledge",
    "strata_workers.tasks.knowledge_sync",
    "strata_workers.tasks.embed",
    "strata_workers.tasks.trace",
    "strata_workers.tasks.cards",
    "strata_workers.tasks.lint",
)


def create_celery(settings: Settings) -> Celery:
    """A Celery app for these settings; tasks route to one queue per layer."""
    app = Celery("strata", broker=settings.redis_url, backend=settings.redis_url)
    transport = {"visibility_timeout": settings.visibility_timeout_s}
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        # At least once: ack after the task finished; a lost worker requeues.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        broker_transport_options=transport,
        result_backend_transport_options=transport,
        broker_connection_retry_on_startup=True,
        # A broker restart (Redis restarted, a failover) must not end running jobs:
        # they write Neo4j, not Redis, and their job records and locks ride out the
        # outage (strata.jobstore.redis_client retries). Cancelling them made every
        # running job of a Redis restart end `worker_lost`. A run that cannot be
        # acknowledged after the reconnect is redelivered later and skips a job that
        # already ended (strata_workers.runner.already_ended): it never reruns.
        worker_cancel_long_running_tasks_on_connection_loss=False,
        result_backend_always_retry=True,  # a result stored while Redis restarts waits for it
        result_backend_max_retries=20,
        task_time_limit=settings.task_time_limit_s,
        task_soft_time_limit=max(settings.task_time_limit_s - 30, 10),
        task_track_started=True,
        result_expires=7 * 24 * 3600,
        task_default_queue=settings.queue_code,
        task_routes={
            "strata.code.*": {"queue": settings.queue_code},
            "strata.knowledge.*": {"queue": settings.queue_knowledge},
            "strata.trace.*": {"queue": settings.queue_trace},
        },
        worker_hijack_root_logger=False,
        worker_send_task_events=True,
        task_send_sent_event=True,
        # `celery beat` (or a worker started with -B) sends the periodic lint of every
        # registered repository; a worker alone never schedules anything.
        beat_schedule={
            "strata-knowledge-lint": {
                "task": KNOWLEDGE_LINT,
                "schedule": settings.cards_lint_interval_s,
                "options": {"queue": settings.queue_knowledge},
            }
        },
    )
    app.conf.strata_settings = settings
    for module in TASK_MODULES:
        __import__(module)
    from strata_workers import signals

    signals.connect()
    return app

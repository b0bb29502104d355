"""Celery on the real Redis: a task goes through a real worker and its result comes back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker

from strata.devstack.redis import RedisServer
from strata.jobs import PING, PingJob
from strata.settings import Settings
from strata_workers.app import create_celery


@pytest.fixture(scope="module")
def celery_app(settings: Settings, redis_server: RedisServer) -> Any:
    return create_celery(settings)


@pytest.fixture(scope="module")
def worker(celery_app: Any, settings: Settings) -> Iterator[Any]:
    queues = ",".join(settings.queues.values())
    with start_worker(
        celery_app,
        queues=queues.split(","),
        concurrency=1,
        pool="solo",
        perform_ping_check=False,
        shutdown_timeout=30,
    ) as running:
        yield running


class TestQueue:
    """Tasks are sent by name with a pydantic payload, run by a real worker, results read back."""

    def test_ping_round_trip_on_each_queue(
        self, celery_app: Any, worker: Any, settings: Settings
    ) -> None:
        for queue in settings.queues.values():
            payload = PingJob(payload=f"hello {queue}").model_dump(mode="json")
            result = celery_app.send_task(PING, kwargs={"job": payload}, queue=queue)
            answer = result.get(timeout=30)
            assert answer["payload"] == f"hello {queue}"
            assert answer["queue"] == queue

    def test_bad_payload_fails_the_task_with_a_clear_error(
        self, celery_app: Any, worker: Any, settings: Settings
    ) -> None:
        result = celery_app.send_task(
            PING, kwargs={"job": {"payload": "x", "unexpected": 1}}, queue=settings.queue_code
        )
        with pytest.raises(Exception, match="unexpected"):
            result.get(timeout=30)

    def test_at_least_once_settings(self, celery_app: Any, settings: Settings) -> None:
        conf = celery_app.conf
        assert conf.task_acks_late is True
        assert conf.task_reject_on_worker_lost is True
        assert conf.worker_prefetch_multiplier == 1
        visibility = conf.broker_transport_options["visibility_timeout"]
        assert visibility > conf.task_time_limit

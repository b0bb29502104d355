"""A worker SIGKILLed whole mid-job: another worker's reaper sends the job again at once,
it succeeds on its second run, and the broker's late redelivery of the first message
(what Redis restores at the visibility timeout) is skipped, never run again.

Real services throughout: the session's Neo4j and Redis, the API process, and real
prefork ``celery worker`` processes; the late redelivery goes through kombu's own
restore of the unacknowledged message.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.graph.integrity import check_repository
from strata.jobstore import JobStore, lost_after
from strata.ontology import load_ontology
from strata.settings import Settings
from strata_workers.runner import HEARTBEAT_S
from tests.integration.workers.stack import (
    ZERO,
    api_process,
    generated_repo,
    push,
    register_repo,
    stack_settings,
    wait_job,
    wait_running,
    worker_process,
)

C1 = datetime(2025, 8, 1, tzinfo=UTC)
FILES = 600  # long enough to kill the worker while the job writes


@pytest.fixture
def stack(
    unique: str, gateway: Gateway, redis_server: RedisServer
) -> Iterator[tuple[Settings, str]]:
    settings = stack_settings(unique)
    with api_process(settings) as base:
        yield settings, base


def _unacked(client: redis.Redis, job_id: str) -> list[str]:
    """Delivery tags of this job's messages that a consumer took and never acknowledged
    (kombu's Redis transport keeps them in the ``unacked`` hash until the timeout)."""
    tags = []
    for tag, raw in client.hgetall("unacked").items():  # type: ignore[union-attr]
        message, _, _ = json.loads(raw)
        if message["headers"]["id"] == job_id:
            tags.append(tag.decode())
    return tags


def _restore(settings: Settings, tag: str) -> None:
    """What the broker does with an unacknowledged message at its visibility timeout:
    kombu's own restore puts it back on its queue."""
    app = Celery("late-redelivery", broker=settings.redis_url, set_as_current=False)
    try:
        with app.connection_for_write() as conn:
            channel: Any = conn.default_channel
            channel.qos.restore_by_tag(tag)
    finally:
        app.close()


def test_a_wholly_killed_workers_job_is_run_again_by_another_worker_once(
    stack: tuple[Settings, str], gateway: Gateway, tmp_path: Path, unique: str
) -> None:
    settings, base = stack
    name = f"lost-worker-{unique}"
    repo, c1 = generated_repo(tmp_path / name, FILES, C1)
    token = register_repo(settings, gateway, name, repo.path)
    client = redis.Redis.from_url(settings.redis_url)
    jobs = JobStore(client)

    with worker_process(settings, tmp_path) as first:
        job_id = push(base, name, ZERO, c1)
        lost_run = wait_running(jobs, job_id, timeout=180)
        first.kill()  # main process and pool child: nobody is left to report or requeue
    assert jobs.get(job_id).state == "running"  # its heartbeat is not stale yet
    [original] = _unacked(client, job_id)  # the broker would redeliver it in 2 h

    with worker_process(settings, tmp_path) as second:
        ready = datetime.now(UTC)
        job = wait_job(base, token, job_id, timeout=lost_after(HEARTBEAT_S) + 240)
        assert job["state"] == "SUCCEEDED", job
        record = jobs.get(job_id)
        assert (record.attempts, record.lost, record.requeued) == (2, 1, 1)
        assert record.worker != lost_run.worker
        assert record.result["mode"] == "full"
        assert record.started_at is not None
        # Judged by its gone processes on this host, not by the 60 s heartbeat threshold.
        assert (record.started_at - ready).total_seconds() < lost_after(HEARTBEAT_S)
        assert jobs.dead_letters(name) == []
        assert "queued again" in second.log.read_text()

        # The late redelivery of the first message: delivered, acknowledged, not run.
        # (The reaper's message is acknowledged just after the job's record says
        # SUCCEEDED, when the task returns: wait for that ack, bounded.)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _unacked(client, job_id) != [original]:
            time.sleep(0.2)
        assert _unacked(client, job_id) == [original]
        _restore(settings, original)
        skipped = f"job {job_id} already succeeded: this delivery is skipped"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and skipped not in second.log.read_text():
            time.sleep(0.2)
        assert skipped in second.log.read_text()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _unacked(client, job_id):
            time.sleep(0.2)
        assert _unacked(client, job_id) == []
        assert client.llen(settings.queue_code) == 0
        after = jobs.get(job_id)
    assert (after.state, after.attempts, after.finished_at) == (
        "succeeded",
        2,
        record.finished_at,
    )
    report = check_repository(gateway, load_ontology(settings.ontology_dir), name)
    assert sum(report.slots.values()) > 0
    assert (report.duplicates, report.overlapping) == (0, 0), report.violations[:3]
    client.close()

"""A Redis restart while jobs are queued and running: nothing lost, nothing run twice.

Redis (broker, job records, repository locks) is a real ``redis-server`` of this
test alone (its own port and AOF under tmp_path), so stopping it disturbs no
other test; Neo4j is the session's. The worker is a real prefork ``celery
worker`` with two pool children, as in production.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from strata.devstack.procs import free_port
from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.graph.integrity import check_repository
from strata.jobs import CODE_REINDEX, ReindexJob
from strata.jobstore import JobRecord, JobStore
from strata.ontology import load_ontology
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from tests.integration.workers.stack import (
    SECRET,
    ZERO,
    api_process,
    generated_repo,
    push,
    stack_settings,
    worker_process,
)

C1 = datetime(2025, 8, 1, tzinfo=UTC)
FILES = 300  # long enough to restart Redis while the first job writes
ENDED = ("succeeded", "failed")


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(var_dir=tmp_path / "redis-var", port=free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _until(jobs: JobStore, job_id: str, done: Any, timeout: float) -> JobRecord:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            record = jobs.get(job_id)
        except redis.RedisError:  # restarting
            record = None
        if record is not None and done(record):
            return record
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not get there in {timeout:.0f}s")


def _redeliver(settings: Settings, job_id: str, repo: str, sha: str) -> int:
    """Deliver the job again, as the broker does with a message it could not see
    acknowledged (after the visibility timeout): everything unacknowledged back to its
    queue, and this job's task once more. How many were unacknowledged."""
    app = Celery(
        "redeliver",
        broker=settings.redis_url,
        set_as_current=False,
        broker_transport_options={"visibility_timeout": 0},
    )
    try:
        with app.connection_for_write() as conn:
            channel: Any = conn.default_channel
            count = int(channel.client.hlen(channel.unacked_key))
            channel.qos.restore_visible(num=100, interval=1)
        job = ReindexJob(job_id=job_id, repo=repo, ref="refs/heads/main", after=sha)
        app.send_task(
            CODE_REINDEX,
            kwargs={"job": job.model_dump(mode="json")},
            queue=settings.queue_code,
            task_id=job_id,
        )
        return count
    finally:
        app.close()


def test_a_redis_restart_loses_no_job_and_runs_none_twice(
    own_redis: RedisServer, gateway: Gateway, tmp_path: Path, unique: str
) -> None:
    settings = stack_settings(unique, redis_url=own_redis.url, dev_redis_port=own_redis.port)
    keys = ServerKeys(settings.secret_key.get_secret_value())
    names = [f"redis-restart-{unique}-{k}" for k in range(3)]
    shas = []
    for name in names:
        repo, sha = generated_repo(tmp_path / name, FILES, C1)
        RepoRegistry(gateway, keys).register(
            name=name, provider="github", secret=SECRET, path=str(repo.path)
        )
        shas.append(sha)
    jobs = JobStore(redis.Redis.from_url(settings.redis_url))
    with api_process(settings) as base, worker_process(settings, tmp_path, concurrency=2) as worker:
        job_ids = [push(base, name, ZERO, sha) for name, sha in zip(names, shas, strict=True)]
        _until(  # two run (two pool children), one waits in the queue
            jobs,
            job_ids[0],
            lambda r: r.state == "running" and r.progress.get("phase") == "writing",
            timeout=180,
        )
        own_redis.stop()
        time.sleep(1.0)
        own_redis.start()

        records = [_until(jobs, job_id, lambda r: r.state in ENDED, 300) for job_id in job_ids]
        assert [r.state for r in records] == ["succeeded"] * 3, [r.error for r in records]
        assert [r.attempts for r in records] == [1, 1, 1]  # nobody ran twice
        assert [r.result["mode"] for r in records] == ["full"] * 3

        # A second delivery of a job that ended (what the restart left unacknowledged
        # comes back after the visibility timeout) is skipped, not run again.
        _redeliver(settings, job_ids[0], names[0], shas[0])
        skipped = f"job {job_ids[0]} already succeeded: this delivery is skipped"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and skipped not in worker.log.read_text():
            time.sleep(0.2)
        again = [jobs.get(job_id) for job_id in job_ids]
        log = worker.log.read_text()
    assert skipped in log
    assert [r.attempts for r in again] == [1, 1, 1]
    assert [(r.state, r.finished_at) for r in again] == [(r.state, r.finished_at) for r in records]
    assert "Terminating it instead" not in log

    ontology = load_ontology(settings.ontology_dir)
    for name in names:
        report = check_repository(gateway, ontology, name)
        assert sum(report.slots.values()) > 0
        assert (report.duplicates, report.overlapping) == (0, 0), report.violations[:3]

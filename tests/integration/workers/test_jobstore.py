"""Job records on the real Redis: heartbeats, lost runs, and ends that only apply once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import redis

from strata.devstack.redis import RedisServer
from strata.jobstore import JobStore, lost_after
from strata.settings import Settings


@pytest.fixture
def jobs(settings: Settings, redis_server: RedisServer) -> Iterator[JobStore]:
    client = redis.Redis.from_url(settings.redis_url)
    yield JobStore(client)
    client.close()


def _age_heartbeat(jobs: JobStore, job_id: str, seconds: float) -> None:
    old = (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat()
    jobs._redis.hset(f"strata:job:{job_id}", "heartbeat_at", old)


class TestHeartbeat:
    """A running job with a fresh heartbeat is running; a stale one reads as lost."""

    def test_fresh_heartbeat_keeps_it_running(self, jobs: JobStore, unique: str) -> None:
        job = jobs.create("code.reindex", f"r-{unique}")
        assert jobs.start(job.id, worker="host:1", heartbeat_s=5) == 0
        _age_heartbeat(jobs, job.id, lost_after(5) - 2)
        assert jobs.beat(job.id) is True
        record = jobs.get(job.id)
        assert record.state == "running"
        assert record.worker == "host:1"
        assert record.attempts == 1

    def test_stale_heartbeat_is_marked_lost_in_get_and_in_lists(
        self, jobs: JobStore, unique: str
    ) -> None:
        repo = f"r-{unique}"
        job = jobs.create("code.reindex", repo)
        jobs.start(job.id, worker="host:1", heartbeat_s=5)
        _age_heartbeat(jobs, job.id, lost_after(5) + 1)
        [listed] = jobs.for_repo(repo)
        assert listed.state == "failed"
        assert listed.error is not None
        assert listed.error["code"] == "worker_lost"
        assert listed.finished_at is not None
        assert jobs.get(job.id).state == "failed"
        assert jobs.beat(job.id) is False  # a late beat does not revive it

    def test_a_redelivered_run_counts_the_lost_one_and_may_finish(
        self, jobs: JobStore, unique: str
    ) -> None:
        job = jobs.create("code.reindex", f"r-{unique}")
        jobs.start(job.id, heartbeat_s=5)
        _age_heartbeat(jobs, job.id, lost_after(5) + 1)
        assert jobs.get(job.id).state == "failed"
        assert jobs.start(job.id, heartbeat_s=5) == 1
        jobs.succeed(job.id, {"ok": True})
        record = jobs.get(job.id)
        assert (record.state, record.attempts, record.lost, record.error) == (
            "succeeded",
            2,
            1,
            None,
        )

    def test_a_retry_waits_queued_and_is_not_a_lost_run(self, jobs: JobStore, unique: str) -> None:
        job = jobs.create("code.reindex", f"r-{unique}")
        jobs.start(job.id, heartbeat_s=5)
        jobs.fail(job.id, {"code": "database_unavailable", "message": "x"}, final=False)
        _age_heartbeat(jobs, job.id, lost_after(5) + 1)
        assert jobs.get(job.id).state == "queued"
        assert jobs.start(job.id, heartbeat_s=5) == 0

    def test_a_record_without_heartbeat_interval_is_never_judged(
        self, jobs: JobStore, unique: str
    ) -> None:
        job = jobs.create("code.reindex", f"r-{unique}")
        jobs.start(job.id)
        _age_heartbeat(jobs, job.id, 3600)
        assert jobs.get(job.id).state == "running"


class TestFailIfOpen:
    """The worker's main process may end a job only while it has not ended."""

    def test_ends_an_open_job_once(self, jobs: JobStore, unique: str) -> None:
        job = jobs.create("code.reindex", f"r-{unique}")
        jobs.start(job.id, heartbeat_s=5)
        assert jobs.fail_if_open(job.id, {"code": "time_limit", "message": "late"})
        assert not jobs.fail_if_open(job.id, {"code": "other", "message": "again"})
        error = jobs.get(job.id).error
        assert error is not None
        assert error["code"] == "time_limit"

    def test_leaves_a_finished_job_and_a_missing_one_alone(
        self, jobs: JobStore, unique: str
    ) -> None:
        job = jobs.create("code.reindex", f"r-{unique}")
        jobs.start(job.id, heartbeat_s=5)
        jobs.succeed(job.id, {})
        assert not jobs.fail_if_open(job.id, {"code": "x", "message": "y"})
        assert jobs.get(job.id).state == "succeeded"
        assert not jobs.fail_if_open(f"missing-{unique}", {"code": "x", "message": "y"})

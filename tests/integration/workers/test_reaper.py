"""The reaper's rules on real Redis: which runs are abandoned, the one claim per lost run,
the message sent again (read back from the broker's queue), the bound on lost runs and
the skip of a late delivery. The whole path with real killed workers is in
test_lost_worker.py."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from celery import Celery

from strata import jobs_recovery
from strata.devstack.redis import RedisServer
from strata.jobs import CODE_REINDEX
from strata.jobstore import JobRecord, JobStore, job_key, lost_after
from strata.locks import Owner, host_id, process_start_time
from strata.settings import Settings
from strata_workers.reaper import Reaper
from strata_workers.runner import HEARTBEAT_S, already_ended


@pytest.fixture
def client(settings: Settings, redis_server: RedisServer) -> Iterator[redis.Redis]:
    conn = redis.Redis.from_url(settings.redis_url)
    yield conn
    conn.close()


def _owner(*, alive: bool) -> tuple[Owner, subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "120"])
    start = process_start_time(proc.pid)
    assert start is not None
    if not alive:
        proc.kill()
        proc.wait()
    return Owner(host_id(), proc.pid, start), proc


@pytest.fixture
def live() -> Iterator[Owner]:
    owner, proc = _owner(alive=True)
    yield owner
    proc.kill()
    proc.wait()


@pytest.fixture
def dead() -> Owner:
    return _owner(alive=False)[0]


@pytest.fixture
def queue(unique: str, client: redis.Redis) -> Iterator[str]:
    name = f"reaper-{unique}"
    yield name
    client.delete(name)


@pytest.fixture
def reaper(settings: Settings, queue: str) -> Iterator[Reaper]:
    app = Celery("reaper-test", broker=settings.redis_url, set_as_current=False)
    app.conf.strata_settings = settings
    app.conf.task_serializer = "json"
    reaper = Reaper(app, {queue})  # swept by hand: no thread started
    yield reaper
    reaper.stop()
    app.close()


class Runs:
    """Job records with an open run, set up as a worker's start leaves them."""

    def __init__(self, client: redis.Redis, unique: str, queue: str) -> None:
        self.client = client
        self.jobs = JobStore(client)
        self.repo = f"reaper-{unique}"
        self.queue = queue

    def started(
        self, owner: Owner, supervisor: Owner, *, silent_s: float = 0, queue: str | None = None
    ) -> JobRecord:
        record = self.jobs.create("code.reindex", self.repo, params={"ref": "main"})
        kwargs = {"job": self.payload(record.id)}
        message = {"task": CODE_REINDEX, "queue": queue or self.queue, "kwargs": kwargs}
        self.jobs.start(record.id, worker="w:1", heartbeat_s=HEARTBEAT_S, message=message)
        beat = datetime.now(UTC) - timedelta(seconds=silent_s)
        self.client.hset(
            job_key(record.id),
            mapping={
                "owner": str(owner),
                "supervisor": str(supervisor),
                "heartbeat_at": beat.isoformat(),
            },
        )
        return self.raw(record.id)

    def payload(self, job_id: str) -> dict[str, str]:
        return {"job_id": job_id, "repo": self.repo, "ref": "main"}

    def raw(self, job_id: str) -> JobRecord:
        """The record as stored (``get`` would mark a silent run lost first)."""
        return JobRecord.load(self.client.hgetall(job_key(job_id)))  # type: ignore[arg-type]

    def sent(self) -> list[dict[str, Any]]:
        """The task messages waiting in the queue: (task id, kwargs)."""
        out = []
        for raw in self.client.lrange(self.queue, 0, -1):  # type: ignore[union-attr]
            message = json.loads(raw)
            _, kwargs, _ = json.loads(base64.b64decode(message["body"]))
            out.append({"id": message["headers"]["id"], "kwargs": kwargs})
        return out


@pytest.fixture
def runs(client: redis.Redis, unique: str, queue: str) -> Runs:
    return Runs(client, unique, queue)


LOST = lost_after(HEARTBEAT_S) + 5  # seconds of silence past the heartbeat threshold


class TestAbandonedRuns:
    def test_a_worker_gone_whole_is_sent_again_at_once_and_only_once(
        self, runs: Runs, reaper: Reaper, dead: Owner
    ) -> None:
        run = runs.started(dead, dead)  # pool child and main process both gone
        assert reaper.sweep() == [run.id]
        record = runs.raw(run.id)
        assert (record.state, record.lost, record.requeued, record.run_open) == (
            "queued",
            1,
            1,
            False,
        )
        assert record.error is not None
        assert record.error["code"] == "worker_lost"
        assert runs.sent() == [{"id": run.id, "kwargs": {"job": runs.payload(run.id)}}]
        assert reaper.sweep() == []  # claimed: a second sweep sends nothing
        assert len(runs.sent()) == 1
        assert runs.jobs.dead_letters(runs.repo) == []
        # The run sent again starts, and does not count the lost run twice.
        assert runs.jobs.start(run.id, worker="w:2", heartbeat_s=HEARTBEAT_S) == 1

    def test_a_killed_pool_child_under_a_living_main_process_is_left_to_celery(
        self, runs: Runs, reaper: Reaper, dead: Owner, live: Owner
    ) -> None:
        run = runs.started(dead, live)  # Celery requeues it (task_reject_on_worker_lost)
        assert reaper.sweep() == []
        assert runs.raw(run.id).state == "running"
        assert runs.sent() == []

    def test_a_silent_process_that_still_lives_here_keeps_its_run(
        self, runs: Runs, reaper: Reaper, live: Owner
    ) -> None:
        run = runs.started(live, live, silent_s=LOST)  # starved, not dead
        assert reaper.sweep() == []
        assert runs.raw(run.id).state == "running"

    def test_another_hosts_run_is_sent_again_once_its_heartbeat_is_stale(
        self, runs: Runs, reaper: Reaper, dead: Owner
    ) -> None:
        elsewhere = Owner("another-host/1", dead.pid, dead.start)
        fresh = runs.started(elsewhere, elsewhere)
        assert reaper.sweep() == []  # not provably gone, heartbeat fresh
        stale = runs.started(elsewhere, elsewhere, silent_s=LOST)
        assert reaper.sweep() == [stale.id]
        assert runs.raw(fresh.id).state == "running"
        assert [m["id"] for m in runs.sent()] == [stale.id]

    def test_a_run_a_reader_marked_lost_leaves_the_dead_letters_when_sent_again(
        self, runs: Runs, reaper: Reaper, dead: Owner
    ) -> None:
        elsewhere = Owner("another-host/1", dead.pid, dead.start)
        run = runs.started(elsewhere, elsewhere, silent_s=LOST)
        assert runs.jobs.get(run.id).state == "failed"  # the reader's judgement
        assert [r.id for r in runs.jobs.dead_letters(runs.repo)] == [run.id]
        assert reaper.sweep() == [run.id]
        assert runs.raw(run.id).state == "queued"
        assert runs.jobs.dead_letters(runs.repo) == []

    def test_a_job_lost_twice_is_given_up_and_a_late_delivery_skipped(
        self, runs: Runs, reaper: Reaper, dead: Owner
    ) -> None:
        run = runs.started(dead, dead)
        runs.client.hset(job_key(run.id), "lost", 1)  # its first run was lost already
        assert reaper.sweep() == [run.id]
        record = runs.raw(run.id)
        assert (record.state, record.lost, record.run_open) == ("failed", 2, False)
        assert record.error is not None
        assert "died 2 times" in record.error["message"]
        assert runs.jobs.message(run.id) is None
        assert runs.sent() == []  # not sent again
        assert [r.id for r in runs.jobs.dead_letters(runs.repo)] == [run.id]
        # The broker's late delivery of its message is skipped, not run a third time.
        ended = already_ended(runs.jobs, run.id)
        assert ended is not None
        assert ended.state == "failed"

    def test_only_runs_of_the_queues_this_worker_takes_are_swept(
        self, runs: Runs, reaper: Reaper, dead: Owner
    ) -> None:
        run = runs.started(dead, dead, queue="a-queue-nobody-here-takes")
        assert reaper.sweep() == []
        assert runs.raw(run.id).state == "running"

    def test_ended_runs_leave_the_running_set(
        self, runs: Runs, reaper: Reaper, dead: Owner, client: redis.Redis
    ) -> None:
        done = runs.started(dead, dead)
        runs.jobs.succeed(done.id, {})
        failed = runs.started(dead, dead)
        runs.jobs.fail(failed.id, {"code": "validation_error"})
        assert client.zscore("strata:jobs:running", done.id) is None
        assert client.zscore("strata:jobs:running", failed.id) is None
        assert reaper.sweep() == []
        assert runs.jobs.message(done.id) is None  # the message is kept only while it runs
        assert runs.jobs.message(failed.id) is None


def test_a_claim_is_taken_once(runs: Runs, dead: Owner) -> None:
    run = runs.started(dead, dead)
    assert jobs_recovery.requeue(runs.jobs, run) is True
    assert jobs_recovery.requeue(runs.jobs, run) is False  # the record moved on
    assert jobs_recovery.exhaust(runs.jobs, run) is False
    assert runs.raw(run.id).lost == 1

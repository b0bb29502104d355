"""A lock or a run whose process is provably gone (this host, pid exited) is not waited
for; jobs that end FAILED are listed as dead letters until a later run succeeds."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest
import redis

from strata.devstack.redis import RedisServer
from strata.errors import DatabaseUnavailable
from strata.jobstore import JobStore
from strata.locks import LEASE_S, Owner, host_id, process_start_time, repository_lock
from strata.settings import Settings
from strata_workers.runner import already_ended


@pytest.fixture
def client(settings: Settings, redis_server: RedisServer) -> Iterator[redis.Redis]:
    conn = redis.Redis.from_url(settings.redis_url)
    yield conn
    conn.close()


@pytest.fixture
def live() -> Iterator[Owner]:
    """The owner identity of a process that runs for the test's length."""
    proc = subprocess.Popen(["sleep", "120"])
    start = process_start_time(proc.pid)
    assert start is not None
    try:
        yield Owner(host_id(), proc.pid, start)
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def dead() -> Owner:
    """The owner identity of a process that ran and exited (reaped)."""
    proc = subprocess.Popen(["sleep", "120"])
    start = process_start_time(proc.pid)
    assert start is not None
    proc.kill()
    proc.wait()
    return Owner(host_id(), proc.pid, start)


def _hold(client: redis.Redis, key: str, owner: Owner | str) -> None:
    client.set(f"strata:lock:{key}", f"{owner}|token", px=LEASE_S * 1000)


class TestOwner:
    def test_round_trip_and_judgement(self, live: Owner, dead: Owner) -> None:
        assert Owner.parse(str(live)) == live
        assert not live.gone()
        assert dead.gone()
        assert not Owner.current().gone()
        elsewhere = Owner("another-host/1", dead.pid, dead.start)
        assert not elsewhere.gone()  # another host is never judged
        assert Owner.parse("no owner here") is None


class TestLockTakeOver:
    def test_a_lock_of_a_gone_holder_is_taken_at_once(
        self, client: redis.Redis, dead: Owner, unique: str
    ) -> None:
        key = f"code:gone-{unique}:main"
        _hold(client, key, dead)
        started = time.monotonic()
        with repository_lock(client, key, "test", wait_s=30):
            held = client.get(f"strata:lock:{key}")
            assert held is not None
            assert held.decode().startswith(f"{Owner.current()}|")
        assert time.monotonic() - started < 5  # not the lease (LEASE_S)
        assert client.get(f"strata:lock:{key}") is None

    def test_a_living_holder_or_one_on_another_host_is_waited_for(
        self, client: redis.Redis, live: Owner, dead: Owner, unique: str
    ) -> None:
        for n, holder in enumerate((live, Owner("another-host/1", dead.pid, dead.start))):
            key = f"code:held-{unique}-{n}:main"
            _hold(client, key, holder)
            with pytest.raises(DatabaseUnavailable), repository_lock(client, key, "x", wait_s=1):
                pass
            assert client.get(f"strata:lock:{key}") == f"{holder}|token".encode()


class TestDeadLetters:
    @pytest.fixture
    def jobs(self, client: redis.Redis) -> JobStore:
        return JobStore(client)

    def test_a_second_delivery_runs_only_when_the_first_run_is_gone_or_lost(
        self, jobs: JobStore, client: redis.Redis, live: Owner, dead: Owner, unique: str
    ) -> None:
        repo = f"r-{unique}"
        job = jobs.create("code.reindex", repo)
        jobs.start(job.id, worker="host:1", heartbeat_s=5)  # a fresh heartbeat
        key = f"strata:job:{job.id}"
        client.hset(key, "owner", str(live))
        started = time.monotonic()
        assert already_ended(jobs, job.id, wait_s=1.5) is None  # waited for it, then runs
        assert time.monotonic() - started >= 1.5
        client.hset(key, "owner", str(dead))
        started = time.monotonic()
        assert already_ended(jobs, job.id, wait_s=30) is None  # gone: no wait
        assert time.monotonic() - started < 5
        assert jobs.get(job.id).state == "running"  # readers still go by the heartbeat

        # Its worker's main process reports the lost run: a dead letter, and a rerun
        # that succeeds takes it off the list; a third delivery is skipped.
        assert jobs.fail_if_open(job.id, {"code": "worker_lost"}) is True
        assert [r.id for r in jobs.dead_letters(repo)] == [job.id]
        assert already_ended(jobs, job.id) is None
        jobs.start(job.id, worker="host:2", heartbeat_s=5)
        jobs.succeed(job.id, {"mode": "full"})
        assert jobs.dead_letters(repo) == []
        ended = already_ended(jobs, job.id)
        assert ended is not None
        assert (ended.state, ended.attempts) == ("succeeded", 2)

    def test_final_failures_are_dead_letters_retries_are_not(
        self, jobs: JobStore, unique: str
    ) -> None:
        repo = f"r-{unique}"
        failed, retried, ok = (jobs.create("code.reindex", repo) for _ in range(3))
        for job in (failed, retried, ok):
            jobs.start(job.id, heartbeat_s=5)
        jobs.fail(failed.id, {"code": "validation_error"})
        jobs.fail(retried.id, {"code": "database_unavailable"}, final=False)
        jobs.succeed(ok.id, {})
        assert [r.id for r in jobs.dead_letters(repo)] == [failed.id]
        assert {r.id for r in jobs.for_repo(repo)} == {failed.id, retried.id, ok.id}
        assert jobs.fail_if_open(retried.id, {"code": "worker_lost"}) is True
        assert [r.id for r in jobs.dead_letters(repo)] == [retried.id, failed.id]

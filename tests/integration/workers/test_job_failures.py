"""No job hangs: every way a task can end leaves its job FAILED (typed, no server paths)
or SUCCEEDED, and a job whose worker vanished reads as lost, never RUNNING forever."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis
import typer

from strata.cli.api import follow_job
from strata.code.indexer import CodeIndexer
from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.jobs import CODE_REINDEX, ReindexJob
from strata.jobstore import JobRecord, JobStore, lost_after, new_job_id
from strata.locks import LEASE_S as LOCK_LEASE_S
from strata.settings import Settings
from strata_workers.runner import HEARTBEAT_S
from tests.integration.workers.stack import (
    ZERO,
    api_process,
    generated_repo,
    push,
    register_repo,
    solo_worker,
    stack_settings,
    wait_job,
    wait_running,
    worker_process,
)

C1 = datetime(2025, 8, 1, tzinfo=UTC)
FILES = 600  # above the parallel threshold: the pool child has parse helpers too


def _jobs(settings: Settings) -> JobStore:
    return JobStore(redis.Redis.from_url(settings.redis_url))


def _wait_record(jobs: JobStore, job_id: str, states: tuple[str, ...], timeout: float) -> JobRecord:
    deadline = time.monotonic() + timeout
    record = jobs.get(job_id)
    while record.state not in states:
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} still {record.state} after {timeout}s")
        time.sleep(0.2)
        record = jobs.get(job_id)
    return record


class TestUnexpectedErrorInATask:
    """A non-Strata exception inside a real task ends the job FAILED with a typed error."""

    @pytest.fixture
    def app(self, unique: str, redis_server: RedisServer, gateway: Gateway) -> Iterator[Any]:
        with solo_worker(stack_settings(unique)) as app:  # this test's settings only
            yield app

    def test_a_bug_becomes_failed_internal_error_without_server_paths(
        self,
        app: Any,
        gateway: Gateway,
        tmp_path: Path,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        settings: Settings = app.conf.strata_settings
        secret_path = str(tmp_path / "server" / "secret.txt")

        def broken(*_: Any, **__: Any) -> Any:
            raise KeyError(f"no such thing at {secret_path}")

        monkeypatch.setattr(CodeIndexer, "index", broken)
        name = f"bug-{unique}"
        repo, c1 = generated_repo(tmp_path / name, 3, C1)
        register_repo(settings, gateway, name, repo.path)
        jobs = _jobs(settings)
        job_id = new_job_id()
        jobs.create("code.reindex", name, job_id=job_id)
        job = ReindexJob(job_id=job_id, repo=name, ref="refs/heads/main", after=c1)
        app.send_task(
            CODE_REINDEX,
            kwargs={"job": job.model_dump(mode="json")},
            queue=settings.queue_code,
            task_id=job_id,
        )

        record = _wait_record(jobs, job_id, ("succeeded", "failed"), timeout=60)
        assert record.state == "failed"
        assert record.error is not None
        assert record.error["code"] == "internal_error"
        assert "KeyError" in record.error["message"]
        assert str(tmp_path) not in str(record.error)
        assert record.finished_at is not None


@pytest.fixture
def stack(
    unique: str, gateway: Gateway, redis_server: RedisServer, tmp_path: Path
) -> Iterator[tuple[Settings, str]]:
    settings = stack_settings(unique)
    with api_process(settings) as base:
        yield settings, base


class TestKilledWorkers:
    """A SIGKILL never leaves a job RUNNING: it is redelivered and finishes, or fails."""

    def test_a_killed_pool_child_is_redelivered_and_the_job_ends(
        self, stack: tuple[Settings, str], gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        settings, base = stack
        name = f"kill-child-{unique}"
        repo, c1 = generated_repo(tmp_path / name, FILES, C1)
        token = register_repo(settings, gateway, name, repo.path)
        jobs = _jobs(settings)
        with worker_process(settings, tmp_path) as worker:
            job_id = push(base, name, ZERO, c1)
            first = wait_running(jobs, job_id)
            [child] = worker.children()
            assert first.worker is not None
            assert first.worker.endswith(f":{child}")
            os.kill(child, signal.SIGKILL)

            # Bounded: the redelivered run waits out the dead run's lock lease first.
            job = wait_job(base, token, job_id, timeout=LOCK_LEASE_S + 180)
        record = jobs.get(job_id)
        assert job["state"] in ("SUCCEEDED", "FAILED"), job
        if job["state"] == "SUCCEEDED":  # redelivered to a fresh child, which finished it
            assert record.attempts == 2
            assert record.lost == 1
            assert job["progress"]["files_total"] == FILES + 20
        else:
            assert job["error"]["code"] == "worker_lost", job

    def test_a_vanished_worker_reads_as_lost_and_its_lock_frees_itself(
        self,
        stack: tuple[Settings, str],
        gateway: Gateway,
        tmp_path: Path,
        unique: str,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        settings, base = stack
        name = f"kill-all-{unique}"
        repo, c1 = generated_repo(tmp_path / name, FILES, C1)
        token = register_repo(settings, gateway, name, repo.path)
        jobs = _jobs(settings)
        with worker_process(settings, tmp_path) as worker:
            job_id = push(base, name, ZERO, c1)
            wait_running(jobs, job_id)
            worker.kill()  # main process and pool child: nobody is left to report
        killed_at = time.monotonic()

        job = wait_job(base, token, job_id, timeout=lost_after(HEARTBEAT_S) + 30)
        assert job["state"] == "FAILED"
        assert job["error"]["code"] == "worker_lost"
        assert time.monotonic() - killed_at >= lost_after(HEARTBEAT_S) - HEARTBEAT_S - 1
        with pytest.raises(typer.Exit) as exited:
            follow_job(job_id, timeout=10, every_s=0.2, url=base, api_key=token)
        assert exited.value.exit_code == 1
        said = " ".join(capsys.readouterr().err.split())
        assert "job lost (worker_lost)" in said

        # The dead run's repository lock is a lease: a new push gets it and finishes.
        with worker_process(settings, tmp_path):
            again = wait_job(base, token, push(base, name, ZERO, c1), timeout=LOCK_LEASE_S + 180)
        assert again["state"] == "SUCCEEDED", again

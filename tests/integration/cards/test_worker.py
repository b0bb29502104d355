"""The cards task on a real Celery worker and Redis: a push rebuilds only the stale cards."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
from celery.contrib.testing.worker import start_worker

from strata.cards import CardService
from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.jobs import CODE_REINDEX, ReindexJob
from strata.jobstore import JobRecord, JobStore, new_job_id
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from strata_workers.app import create_celery
from tests.gitrepo import GitRepo
from tests.integration.cards.conftest import ALPHA_CORE, C1, C2, two_packages


@contextmanager
def running_worker(settings: Settings) -> Iterator[Any]:
    """A real Celery worker (solo pool) on every queue, for these settings."""
    app = create_celery(settings)
    with start_worker(
        app,
        queues=list(settings.queues.values()),
        concurrency=1,
        pool="solo",
        perform_ping_check=False,
        shutdown_timeout=60,
    ):
        yield app


@pytest.fixture(scope="module")
def worker_app(settings: Settings, redis_server: RedisServer, gateway: Gateway) -> Iterator[Any]:
    with running_worker(settings) as app:
        yield app


def push(app: Any, settings: Settings, jobs: JobStore, repo: str, sha: str) -> None:
    job_id = new_job_id()
    jobs.create("code.reindex", repo, job_id=job_id)
    payload = ReindexJob(job_id=job_id, repo=repo, ref="refs/heads/main", after=sha)
    app.send_task(
        CODE_REINDEX,
        kwargs={"job": payload.model_dump(mode="json")},
        queue=settings.queue_code,
        task_id=job_id,
    )


def wait_cards(jobs: JobStore, repo: str, sha: str, timeout: float = 180) -> JobRecord:
    """The knowledge.cards job the chain ends with for this push, once it finished."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for record in jobs.for_repo(repo, limit=50):
            if record.state == "failed":
                raise AssertionError(f"job {record.kind} failed: {record.error}")
            ours = record.kind == "knowledge.cards" and record.params.get("after") == sha
            if ours and record.state == "succeeded":
                return record
        time.sleep(0.2)
    raise AssertionError("the cards job did not finish")


def registered(gateway: Gateway, settings: Settings, name: str, repo: GitRepo) -> JobStore:
    """The repository registered at its local path; the job store to watch its jobs in."""
    RepoRegistry(gateway, ServerKeys(settings.secret_key.get_secret_value())).register(
        name=name, provider="github", secret="s" * 32, path=str(repo.path)
    )
    return JobStore(redis.Redis.from_url(settings.redis_url))


def test_push_rebuilds_only_stale_cards(
    worker_app: Any,
    settings: Settings,
    gateway: Gateway,
    service: CardService,
    tmp_path: Path,
    unique: str,
) -> None:
    name = f"cardsq-{unique}"
    repo = two_packages(GitRepo(tmp_path / "q"))
    c1 = repo.commit("first", C1)
    jobs = JobStore(redis.Redis.from_url(settings.redis_url))
    RepoRegistry(gateway, ServerKeys(settings.secret_key.get_secret_value())).register(
        name=name, provider="github", secret="s" * 32, path=str(repo.path)
    )
    push(worker_app, settings, jobs, name, c1)
    first = wait_cards(jobs, name, c1)
    assert first.result["rebuilt"] == ["alpha", "beta"]
    repo.write("alpha/alpha/core.py", ALPHA_CORE.replace("x * 2", "x + x"))
    c2 = repo.commit("alpha body", C2)
    push(worker_app, settings, jobs, name, c2)
    second = wait_cards(jobs, name, c2)
    assert second.result["rebuilt"] == ["alpha"]
    assert second.result["fresh"] == 1
    cards = {c.name: c.commit for c in service.cards(name)}
    assert cards == {"alpha": c2, "beta": c1}
    assert [c.name for c, s in service.with_staleness(name) if s.stale] == []


def test_a_push_that_removes_a_package_closes_its_card(
    worker_app: Any,
    settings: Settings,
    gateway: Gateway,
    service: CardService,
    tmp_path: Path,
    unique: str,
) -> None:
    """End to end: the cards job closes the card at the removing commit; as of before, it reads."""
    from datetime import timedelta

    from strata.temporal import AsOf

    name = f"cardsv-{unique}"
    repo = two_packages(GitRepo(tmp_path / "v"))
    c1 = repo.commit("first", C1)
    jobs = registered(gateway, settings, name, repo)
    push(worker_app, settings, jobs, name, c1)
    wait_cards(jobs, name, c1)
    for path in ("beta/pyproject.toml", "beta/beta/__init__.py", "beta/beta/service.py"):
        repo.delete(path)
    repo.delete("beta/tests/test_service.py")
    c2 = repo.commit("drop beta", C2)
    push(worker_app, settings, jobs, name, c2)
    second = wait_cards(jobs, name, c2)
    assert second.result["closed"] == ["beta"]
    assert [c.name for c in service.cards(name)] == ["alpha"]
    before = service.cards(name, as_of=AsOf.at(C2 - timedelta(days=1)))
    assert [c.name for c in before] == ["alpha", "beta"]

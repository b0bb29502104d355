"""A reindex whose ref a later push already moved on is not indexed (it would read as a
rewind): it succeeds as ``superseded``, through a real Celery worker."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.jobs import CODE_REINDEX, ReindexJob
from strata.jobstore import JobStore
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from tests.integration.workers.stack import SECRET, generated_repo, solo_worker, stack_settings

C1 = datetime(2025, 8, 1, tzinfo=UTC)
KIND = CODE_REINDEX.removeprefix("strata.")


@pytest.fixture
def app(unique: str, redis_server: RedisServer, gateway: Gateway) -> Iterator[Any]:
    with solo_worker(stack_settings(unique)) as app:
        yield app


def test_superseded_by_newer_success_of_the_same_ref_only(
    settings: Settings, redis_server: RedisServer, unique: str
) -> None:
    jobs = JobStore(redis.Redis.from_url(settings.redis_url))
    repo = f"sup-{unique}"
    old, other_ref, new = (
        jobs.create(KIND, repo, params={"ref": ref}) for ref in ("main", "dev", "main")
    )
    assert jobs.superseded_by(old.id) is None  # the newer one has not succeeded yet
    jobs.succeed(other_ref.id, {})
    assert jobs.superseded_by(old.id) is None  # another ref
    jobs.succeed(new.id, {})
    superseding = jobs.superseded_by(old.id)
    assert superseding is not None
    assert superseding.id == new.id
    assert jobs.superseded_by(new.id) is None  # nothing after it


def test_a_reindex_behind_a_newer_success_is_skipped(
    app: Any, gateway: Gateway, tmp_path: Path, unique: str
) -> None:
    settings: Settings = app.conf.strata_settings
    name = f"superseded-{unique}"
    repo, c1 = generated_repo(tmp_path / name, 3, C1)
    RepoRegistry(gateway, ServerKeys(settings.secret_key.get_secret_value())).register(
        name=name, provider="github", secret=SECRET, path=str(repo.path)
    )
    jobs = JobStore(redis.Redis.from_url(settings.redis_url))
    older = jobs.create(KIND, name, params={"ref": "refs/heads/main", "after": c1})
    newer = jobs.create(KIND, name, params={"ref": "refs/heads/main", "after": c1})
    jobs.succeed(newer.id, {"mode": "full"})
    job = ReindexJob(job_id=older.id, repo=name, ref="refs/heads/main", after=c1)
    app.send_task(
        CODE_REINDEX,
        kwargs={"job": job.model_dump(mode="json")},
        queue=settings.queue_code,
        task_id=older.id,
    )
    deadline = time.monotonic() + 60
    record = jobs.get(older.id)
    while record.state != "succeeded" and time.monotonic() < deadline:
        time.sleep(0.2)
        record = jobs.get(older.id)
    assert record.state == "succeeded", record
    assert record.result["mode"] == "superseded"
    assert record.result["superseded_by"] == newer.id
    rows = gateway.read("MATCH (f:File {repo: $repo}) RETURN count(f) AS n", repo=name)
    assert rows[0]["n"] == 0  # nothing was indexed

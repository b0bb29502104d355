"""The embeddings after a push come in bounded jobs, each sending the next, so a large
repository's vectors do not hold the knowledge queue (found by bench/race.py: the
Django sdist's 45k documents held it for minutes, and the requirements sync of
every push after it waited that long)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import redis

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.jobstore import JobStore
from tests.integration.workers.stack import push_new_repo, solo_worker, stack_settings

C1 = datetime(2025, 8, 1, tzinfo=UTC)
CHUNK, JOB_CHUNKS = 3, 2  # six documents a job


@pytest.fixture
def app(
    unique: str, redis_server: RedisServer, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    from strata_workers.tasks import embed

    monkeypatch.setattr(embed, "CHUNK", CHUNK)
    monkeypatch.setattr(embed, "JOB_CHUNKS", JOB_CHUNKS)
    with solo_worker(stack_settings(unique)) as app:
        yield app


def test_vectors_come_in_bounded_jobs_that_chain(
    app: Any, gateway: Gateway, tmp_path: Path, unique: str
) -> None:
    settings = app.conf.strata_settings
    name = f"embed-chain-{unique}"
    count = (
        "MATCH (d:SearchDoc {repo: $repo}) RETURN count(d) AS docs, count(d.embedding) AS vectors"
    )
    jobs = JobStore(redis.Redis.from_url(settings.redis_url))
    _, job = push_new_repo(app, gateway, tmp_path / name, 4, C1)
    assert job["state"] == "SUCCEEDED", job
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        row = gateway.read(count, repo=name)[0]
        embeds = [r for r in jobs.for_repo(name, limit=100) if r.kind == "knowledge.embed"]
        settled = embeds and all(r.state == "succeeded" for r in embeds)
        if row["vectors"] == row["docs"] and settled:
            break
        time.sleep(0.5)
    docs = row["docs"]
    assert docs > CHUNK * JOB_CHUNKS * 2, row  # enough for at least three jobs
    assert row["vectors"] == docs, row
    embeds.sort(key=lambda r: r.created_at)
    assert [r.state for r in embeds] == ["succeeded"] * len(embeds)
    assert len(embeds) == -(-docs // (CHUNK * JOB_CHUNKS)), [r.result for r in embeds]
    assert sum(r.result["embedded"] for r in embeds) == docs  # each document once
    for first, then in pairwise(embeds):
        assert first.result["embedded"] == CHUNK * JOB_CHUNKS
        assert first.result["left"] > 0
        assert first.result["next_job"] == then.id
    assert embeds[-1].result["left"] == 0
    assert "next_job" not in embeds[-1].result

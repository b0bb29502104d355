"""What a reindex does after the index itself (follow-up, search documents, the answer)
is still part of its run: the heartbeat goes on, and a failure there ends the job FAILED.

Found by bench/race.py on a fresh graph: a full index of the Django sdist spent ~75 s
writing its 45k search documents after the heartbeat had stopped, so the poller read
the job as lost (``worker_lost``) while the worker went on to finish it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from tests.integration.workers.stack import push_new_repo, solo_worker, stack_settings

C1 = datetime(2025, 8, 1, tzinfo=UTC)
BEAT_S = 0.2


@pytest.fixture
def app(
    unique: str, redis_server: RedisServer, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    from strata_workers import runner

    monkeypatch.setattr(runner, "HEARTBEAT_S", BEAT_S)
    with solo_worker(stack_settings(unique)) as app:
        yield app


def test_the_heartbeat_goes_on_while_search_documents_are_written(
    app: Any, gateway: Gateway, tmp_path: Path, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from strata_workers.tasks import code

    written = code._search_documents
    beats: list[datetime | None] = []

    def slow_documents(ctx: Any, repo: str, result: Any) -> int | None:
        (running,) = [r for r in ctx.jobs.for_repo(repo) if r.state == "running"]
        for _ in range(3):  # long enough for several beats
            beats.append(ctx.jobs.get(running.id).heartbeat_at)
            time.sleep(BEAT_S * 4)
        return written(ctx, repo, result)

    monkeypatch.setattr(code, "_search_documents", slow_documents)
    _, job = push_new_repo(app, gateway, tmp_path / f"beat-{unique}", 3, C1)
    assert job["state"] == "SUCCEEDED", job
    assert job["result"]["search_documents"] > 0
    assert len(beats) == 3
    assert None not in beats
    assert beats[0] < beats[1] < beats[2], beats  # renewed while the documents were written
    # The job says where its time went around the index: the slow documents step shows.
    steps = job["result"]["task_seconds"]
    assert list(steps) == ["queued", "open", "lock", "index", "documents", "followup", "total"]
    assert steps["documents"] >= 3 * 4 * BEAT_S * 0.9
    assert steps["total"] >= steps["documents"] + steps["index"]


def test_a_failure_after_the_index_ends_the_job_failed(
    app: Any, gateway: Gateway, tmp_path: Path, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from strata_workers.tasks import code

    def broken(ctx: Any, repo: str, result: Any) -> int | None:
        raise RuntimeError("/srv/secret/path: disk on fire")

    monkeypatch.setattr(code, "_search_documents", broken)
    _, job = push_new_repo(app, gateway, tmp_path / f"after-{unique}", 3, C1)
    assert job["state"] == "FAILED", job
    assert job["error"]["code"] == "internal_error", job["error"]
    assert "/srv/secret" not in str(job["error"])

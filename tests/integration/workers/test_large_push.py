"""A push of a repository above the parallel-parse threshold goes through the whole
path every push takes: signed webhook -> real API process -> real prefork Celery
worker (a daemonic pool child) -> Neo4j -> a GraphQL answer read back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.code.indexer import PARALLEL_PARSE_MIN_FILES
from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.settings import Settings
from tests.integration.workers.stack import (
    ZERO,
    api_process,
    generated_repo,
    gql,
    push,
    register_repo,
    stack_settings,
    wait_job,
)

C1 = datetime(2025, 7, 1, tzinfo=UTC)
CALLERS = """
query($id: ID!) { callers(symbol: $id, depth: 1, first: 20) { qualifiedName } }
"""


@pytest.fixture(scope="module")
def stack(
    gateway: Gateway, redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Settings, str]]:
    from tests.integration.workers.stack import worker_process

    settings = stack_settings(f"large-{datetime.now(UTC).strftime('%H%M%S%f')}")
    with api_process(settings) as base, worker_process(settings, tmp_path_factory.mktemp("w")):
        yield settings, base


def _index_through_the_worker(
    stack: tuple[Settings, str], gateway: Gateway, tmp_path: Path, name: str, files: int
) -> tuple[dict[str, Any], str]:
    settings, base = stack
    repo, c1 = generated_repo(tmp_path / name, files, C1)
    token = register_repo(settings, gateway, name, repo.path)
    job = wait_job(base, token, push(base, name, ZERO, c1), timeout=240)
    assert job["state"] == "SUCCEEDED", job
    return job, token


class TestParallelParseInThePreforkWorker:
    """Above the threshold the worker's pool child parses in helper processes; below, inline."""

    def test_thousands_of_files_are_indexed_and_answered(
        self, stack: tuple[Settings, str], gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        name = f"large-{unique}"
        job, token = _index_through_the_worker(stack, gateway, tmp_path, name, 2000)
        progress = job["progress"]
        assert progress["mode"] == "full"
        assert progress["files_parsed"] == 2020  # 2,000 modules and 20 package __init__ files
        assert progress["parse_workers"] >= 2
        callers = gql(stack[1], token, CALLERS, {"id": f"{name}|main|pkg0/mod0.py|helper_0"})
        assert sorted(c["qualifiedName"] for c in callers["callers"]) == [
            "pkg0.mod0.main_0",
            "pkg19.mod1999.Thing1999.run",
        ]

    def test_just_below_the_threshold_parses_inline(
        self, stack: tuple[Settings, str], gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        name = f"below-{unique}"
        modules = PARALLEL_PARSE_MIN_FILES - 1 - 20
        job, token = _index_through_the_worker(stack, gateway, tmp_path, name, modules)
        progress = job["progress"]
        assert progress["files_parsed"] == PARALLEL_PARSE_MIN_FILES - 1
        assert progress["parse_workers"] == 0
        callers = gql(stack[1], token, CALLERS, {"id": f"{name}|main|pkg0/mod0.py|helper_0"})
        assert sorted(c["qualifiedName"] for c in callers["callers"]) == [
            "pkg0.mod0.main_0",
            f"pkg{(modules - 1) % 20}.mod{modules - 1}.Thing{modules - 1}.run",
        ]

"""A repository of 50,000 files through the real path (signed webhook -> real API
process -> real prefork worker): the full push and a one-file push after it both
SUCCEED whole, every file of the tree is listed and judged, and the graph holds
every source file.

The files are tiny and written by ``git fast-import`` (no work tree), so the
repository costs a second or two to make. To keep CI time sane, 2,000 of them
are indexed modules: 8,000 are JavaScript under ``node_modules`` (skipped and
counted) and 40,000 are data files no parser reads. `bench/many_files.py` pushes
50,000 indexed modules (minutes on 2 cores).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.settings import Settings
from strata.testing import fast_commit
from tests.integration.workers.stack import (
    ZERO,
    gql,
    heads,
    push,
    register,
    running_stack,
    wait_job,
)

FILES = 50_000
MODULES = 2_000
VENDORED = 8_000
PER_DIR = 500
WHEN = int(datetime(2025, 11, 1, tzinfo=UTC).timestamp())
MODULE = b"def f():\n    return 1\n\n\ndef g():\n    return f()\n"
CALLERS = "query($id: ID!) { callers(symbol: $id, depth: 1, first: 5) { qualifiedName } }"


def _path(i: int) -> str:
    return f"pkg{i // PER_DIR:03d}/m{i:05d}.py"


def _tree() -> Iterator[tuple[str, bytes]]:
    """50,000 files: modules, vendored JavaScript, data."""
    for i in range(MODULES):
        yield _path(i), MODULE
    for i in range(VENDORED):
        yield f"web/node_modules/lib{i // PER_DIR}/f{i}.js", b"module.exports = 1;\n"
    for i in range(FILES - MODULES - VENDORED):
        yield f"data/d{i // PER_DIR:03d}/row{i:05d}.csv", b"a,b\n1,2\n"


@pytest.fixture(scope="module")
def stack(
    gateway: Gateway, redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Settings, str]]:
    with running_stack(tmp_path_factory.mktemp("many-files"), "many") as running:
        yield running


def _files(gateway: Gateway, name: str) -> int:
    rows = gateway.read("MATCH (f:File {repo: $repo}) RETURN count(f) AS n", repo=name)
    return int(rows[0]["n"])


class TestFiftyThousandFiles:
    """Size alone never fails a push or leaves it half written."""

    def test_a_full_push_then_a_one_file_push(
        self, stack: tuple[Settings, str], gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        settings, base = stack
        name = f"many-{unique}"
        path = tmp_path / name
        c1 = fast_commit(path, _tree(), WHEN)
        token = register(settings, gateway, name, path=path)

        job = wait_job(base, token, push(base, name, ZERO, c1), timeout=300)
        assert job["state"] == "SUCCEEDED", job
        assert job["result"]["files_total"] == MODULES
        assert job["result"]["skipped"] == {"vendored_or_generated_dir": VENDORED}
        assert job["result"]["mode"] == "full"
        assert _files(gateway, name) == MODULES
        assert heads(base, token, name) == {"main": c1}

        changed = b"def f():\n    return 2\n\n\ndef h():\n    return f()\n"
        c2 = fast_commit(path, [(_path(7), changed)], WHEN + 3600, parent=c1)
        job = wait_job(base, token, push(base, name, c1, c2), timeout=300)
        assert job["state"] == "SUCCEEDED", job
        assert job["result"]["mode"] == "incremental"
        assert job["result"]["files_total"] == MODULES
        assert job["result"]["files_parsed"] == 1
        assert _files(gateway, name) == MODULES
        assert heads(base, token, name) == {"main": c2}
        found = gql(base, token, CALLERS, {"id": f"{name}|main|{_path(7)}|f"})["callers"]
        assert [c["qualifiedName"] for c in found] == [f"pkg000.m{7:05d}.h"]

"""Files a parser must not choke on, pushed through the real path (signed webhook ->
real API process -> real prefork worker): the job SUCCEEDS, what cannot be indexed
is skipped with its reason in the job's progress, the rest is indexed and answered.

One push carries them all: a 20 MB generated module, a Latin-1 module, a module
with bytes that are no encoding at all, a file name that is not UTF-8, symlink
loops (file and directory) and symlinks pointing out of the repository.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from tests.gitrepo import GitRepo
from tests.integration.workers.stack import (
    ZERO,
    gql,
    heads,
    push,
    register,
    running_stack,
    wait_job,
)

C1 = datetime(2025, 10, 1, tzinfo=UTC)
BIG_BYTES = 20 * 1024 * 1024
CORE = "def base():\n    return 1\n\n\ndef use():\n    return base()\n"
# Latin-1, declared: valid Python whose bytes are not UTF-8 (0xe9 is "é").
LATIN1 = (
    b"# -*- coding: latin-1 -*-\n"
    b'"""Caf\xe9 cr\xe8me."""\n'
    b"from app.core import base\n\n\n"
    b"def caf():\n"
    b'    """Servi \xe0 la fran\xe7aise."""\n'
    b"    return base()\n"
)
# Bytes that decode in no encoding Python knows of (no NUL: not "binary").
GARBLED = (
    b"def junk():\n    return '\xff\xfe\xc3\x28\xa0\xa1'\n\n\ndef fine():\n    return junk()\n"
)
NOT_UTF8_NAME = b"app/caf\xe9.py"
NOT_UTF8_PACKAGE = b"caf\xe9/package.json"  # a manifest: its folder would be a Package
CALLERS = "query($id: ID!) { callers(symbol: $id, depth: 1, first: 20) { qualifiedName } }"
SYMBOL = "query($id: ID!) { symbol(id: $id) { qualname } }"


@dataclass(frozen=True)
class Pushed:
    name: str
    token: str
    base: str
    commit: str
    job: dict[str, Any]


def _odd_repository(path: Path) -> tuple[GitRepo, str]:
    repo = GitRepo(path)
    repo.write("app/__init__.py", "")
    repo.write("app/core.py", CORE)
    line = b"GENERATED_%08d = %08d  # a long generated table, one constant per line\n"
    rows = BIG_BYTES // len(line % (0, 0)) + 1
    repo.write("app/big_generated.py", b"".join(line % (i, i) for i in range(rows)))
    repo.write("app/latin1.py", LATIN1)
    repo.write("app/garbled.py", GARBLED)
    with open(os.path.join(os.fsencode(path), NOT_UTF8_NAME), "wb") as out:
        out.write(b"def hidden():\n    return 1\n")
    os.mkdir(os.path.join(os.fsencode(path), os.path.dirname(NOT_UTF8_PACKAGE)))
    with open(os.path.join(os.fsencode(path), NOT_UTF8_PACKAGE), "wb") as out:
        out.write(b'{"name": "cafe", "main": "index.js"}\n')
    repo.symlink("app/loop_a.py", "loop_b.py")  # a -> b -> a
    repo.symlink("app/loop_b.py", "loop_a.py")
    repo.symlink("app/itself.py", "itself.py")
    repo.symlink("app/here", ".")  # a directory loop
    repo.symlink("app/tree.py", ".")
    repo.symlink("app/passwd.py", "/etc/passwd")  # out of the repository
    repo.symlink("app/outside.py", "../../outside.py")
    return repo, repo.commit("odd files", C1)


@pytest.fixture(scope="module")
def pushed(
    gateway: Gateway, redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pushed]:
    tmp = tmp_path_factory.mktemp("odd-files")
    with running_stack(tmp, "odd") as (settings, base):
        name = f"odd-{datetime.now(UTC).strftime('%H%M%S%f')}"
        repo, c1 = _odd_repository(tmp / name)
        token = register(settings, gateway, name, path=repo.path)
        job = wait_job(base, token, push(base, name, ZERO, c1), timeout=240)
        yield Pushed(name, token, base, c1, job)


def _files(gateway: Gateway, name: str) -> set[str]:
    rows = gateway.read("MATCH (f:File {repo: $repo}) RETURN f.path AS path", repo=name)
    return {row["path"] for row in rows}


class TestOddFilesInOnePush:
    """Every odd file is skipped with its reason or indexed; the job succeeds whole."""

    def test_the_job_succeeds_with_every_skip_counted_by_reason(self, pushed: Pushed) -> None:
        assert pushed.job["state"] == "SUCCEEDED", pushed.job
        result = pushed.job["result"]  # the job's summary: counters and skips by reason
        assert result["skipped"] == {"symlink": 6, "too_large": 1, "path_not_utf8": 1}
        assert result["files_total"] == 4  # __init__, core, latin1, garbled
        assert heads(pushed.base, pushed.token, pushed.name) == {"main": pushed.commit}

    def test_only_the_readable_regular_files_are_in_the_graph(
        self, pushed: Pushed, gateway: Gateway
    ) -> None:
        assert _files(gateway, pushed.name) == {
            "app/__init__.py",
            "app/core.py",
            "app/latin1.py",
            "app/garbled.py",
        }

    def test_a_latin1_module_is_indexed_and_its_calls_resolve(self, pushed: Pushed) -> None:
        found = gql(
            pushed.base, pushed.token, CALLERS, {"id": f"{pushed.name}|main|app/core.py|base"}
        )
        assert sorted(c["qualifiedName"] for c in found["callers"]) == [
            "app.core.use",
            "app.latin1.caf",
        ]

    def test_a_module_of_undecodable_bytes_is_indexed(self, pushed: Pushed) -> None:
        key = f"{pushed.name}|main|app/garbled.py|junk"
        assert gql(pushed.base, pushed.token, SYMBOL, {"id": key})["symbol"] == {"qualname": "junk"}
        found = gql(pushed.base, pushed.token, CALLERS, {"id": key})["callers"]
        assert [c["qualifiedName"] for c in found] == ["app.garbled.fine"]

    def test_symlinks_are_never_followed(self, pushed: Pushed, gateway: Gateway) -> None:
        # Nothing of what a link names (another link, a folder, /etc/passwd) was read.
        rows = gateway.read(
            "MATCH (s:Symbol {repo: $repo}) RETURN collect(DISTINCT s.path) AS paths",
            repo=pushed.name,
        )
        assert set(rows[0]["paths"]) <= {"app/core.py", "app/latin1.py", "app/garbled.py"}

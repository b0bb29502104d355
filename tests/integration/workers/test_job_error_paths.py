"""Issue 15's note: a failed job's `error` showed server paths (``git cannot resolve ...
in /srv/...``) to any reader of the repository. The exact case end to end: a signed
push of a commit the registered repository does not hold, run by a real worker, read
back through the API's `job(id)`."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from tests.integration.workers.stack import (
    ZERO,
    api_process,
    generated_repo,
    push,
    register_repo,
    solo_worker,
    stack_settings,
    wait_job,
)

C1 = datetime(2025, 8, 1, tzinfo=UTC)
ABSENT = "c0ffee" * 6 + "beef"  # a well-formed sha that no repository here holds


@pytest.fixture
def app(unique: str, redis_server: RedisServer, gateway: Gateway) -> Iterator[Any]:
    with solo_worker(stack_settings(unique)) as app:
        yield app


def test_an_unresolvable_commit_fails_the_job_without_naming_server_paths(
    app: Any, gateway: Gateway, tmp_path: Path, unique: str
) -> None:
    settings = app.conf.strata_settings
    name = f"paths-{unique}"
    where = tmp_path / "srv" / "git" / name  # the server path that must not show
    repo, _ = generated_repo(where, 3, C1)
    token = register_repo(settings, gateway, name, repo.path)
    with api_process(settings) as base:
        job = wait_job(base, token, push(base, name, ZERO, ABSENT), timeout=120)
    assert job["state"] == "FAILED", job
    error = job["error"]
    # Looked for again (a fetch race) and then refused as a typed missing commit.
    assert error["code"] == "commit_not_found", error
    assert ABSENT[:12] in error["message"]  # it still says what went wrong
    shown = str(error)
    assert str(tmp_path) not in shown
    assert "/srv/" not in shown

"""Pushes the mirror cannot serve at once, through the real path (signed webhook ->
real API process -> real prefork worker -> a mirror cloned from a real git host):
each ends with a clear, typed outcome in the job and never a stuck job or a
partial head.

- a commit the mirror lacks: the fetch brings it, or a fetch after a short wait
  does, or the job fails ``commit_not_found`` (for a registered path too);
- a shallow mirror is deepened, so a fast-forward push stays incremental;
- the mirror removed under a running job: ``git_error`` naming what happened,
  and the next push clones it anew.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from strata import locks
from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.workers.gitserver import GitHost, git, git_host
from tests.integration.workers.stack import (
    ZERO,
    heads,
    push,
    register,
    running_stack,
    wait_job,
)

C1 = datetime(2025, 9, 1, tzinfo=UTC)
MISSING = "5" * 40  # a well-formed sha no repository here holds


@pytest.fixture(scope="module")
def stack(
    gateway: Gateway, redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Settings, str]]:
    tmp = tmp_path_factory.mktemp("mirror-faults")
    with running_stack(tmp, "mirror", mirrors_dir=tmp / "mirrors") as running:
        yield running


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitHost]:
    with git_host(tmp_path_factory.mktemp("git-host")) as served:
        yield served


class Upstream:
    """A developer's clone whose pushes publish commits on the git host."""

    def __init__(self, host: GitHost, name: str, work: Path) -> None:
        self.bare = host.bare(name)
        self.url = host.url(name)
        self.clone = GitRepo(work)
        self.clone._git("remote", "add", "origin", str(self.bare))
        self._n = 0

    def commit(self, publish: bool = True) -> str:
        """A new commit adding one module (published to the host unless told not to)."""
        self._n += 1
        n = self._n
        self.clone.write(
            f"app/m{n}.py", f"def f{n}():\n    return {n}\n\n\ndef g{n}():\n    return f{n}()\n"
        )
        sha = self.clone.commit(f"module {n}", C1 + timedelta(days=n))
        if publish:
            self.publish()
        return sha

    def publish(self) -> None:
        self.clone._git("push", "-q", "origin", "main")


@dataclass
class Published:
    """A repository published on the host with one commit, registered by URL and
    indexed (its mirror cloned)."""

    settings: Settings
    base: str  # the API's URL
    name: str
    up: Upstream
    token: str  # a read key
    c1: str

    def indexed(self, before: str, after: str) -> Any:
        """Push ``before`` -> ``after`` and wait for the job's end."""
        return _indexed((self.settings, self.base), self.token, self.name, before, after)

    def heads(self) -> dict[str, str]:
        return heads(self.base, self.token, self.name)


Publish = Callable[[str], Published]


@pytest.fixture
def published(
    stack: tuple[Settings, str], gateway: Gateway, host: GitHost, tmp_path: Path, unique: str
) -> Publish:
    """``published(prefix)``: a repository named after ``prefix``, pushed once."""

    def publish(prefix: str) -> Published:
        name = f"{prefix}-{unique}"
        up = Upstream(host, name, tmp_path / "dev")
        c1 = up.commit()
        token = register(stack[0], gateway, name, url=up.url)
        assert _indexed(stack, token, name, ZERO, c1)["state"] == "SUCCEEDED"
        return Published(stack[0], stack[1], name, up, token, c1)

    return publish


def _mirror(settings: Settings, name: str) -> Path:
    return settings.mirrors_dir / f"{name}.git"


def _indexed(stack: tuple[Settings, str], token: str, name: str, before: str, after: str) -> Any:
    base = stack[1]
    return wait_job(base, token, push(base, name, before, after), timeout=180)


class TestCommitsTheMirrorLacks:
    """A push names a commit the mirror does not hold: fetched, waited for, or refused."""

    def test_the_fetch_brings_a_new_commit(self, published: Publish) -> None:
        pub = published("fetch")
        c2 = pub.up.commit()  # on the host, not yet in the mirror
        job = pub.indexed(pub.c1, c2)
        assert job["state"] == "SUCCEEDED", job
        assert job["progress"]["mode"] == "incremental"
        assert pub.heads() == {"main": c2}

    def test_a_commit_published_after_its_webhook_is_waited_for(self, published: Publish) -> None:
        pub = published("late")
        c2 = pub.up.commit(publish=False)  # the webhook comes before the host has the commit
        job_id = push(pub.base, pub.name, pub.c1, c2)
        later = threading.Timer(1.5, pub.up.publish)
        later.start()
        try:
            job = wait_job(pub.base, pub.token, job_id, timeout=180)
        finally:
            later.join()
        assert job["state"] == "SUCCEEDED", job
        assert pub.heads() == {"main": c2}

    def test_a_commit_that_never_comes_fails_typed_and_keeps_the_head(
        self, published: Publish, tmp_path: Path
    ) -> None:
        pub = published("never")
        job = pub.indexed(pub.c1, MISSING)
        assert job["state"] == "FAILED", job
        error = job["error"]
        assert error["code"] == "commit_not_found"
        assert MISSING[:12] in error["message"]
        assert str(pub.settings.mirrors_dir) not in str(error)
        assert str(tmp_path) not in str(error)
        assert pub.heads() == {"main": pub.c1}

    def test_a_registered_path_without_the_commit_fails_typed(
        self, stack: tuple[Settings, str], gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        settings, base = stack
        name = f"path-{unique}"
        repo = GitRepo(tmp_path / name)
        repo.write("a.py", "def a():\n    return 1\n")
        c1 = repo.commit("a", C1)
        token = register(settings, gateway, name, path=repo.path)
        assert _indexed(stack, token, name, ZERO, c1)["state"] == "SUCCEEDED"
        job = _indexed(stack, token, name, c1, MISSING)
        assert job["state"] == "FAILED", job
        assert job["error"]["code"] == "commit_not_found"
        assert str(tmp_path) not in str(job["error"])
        assert heads(base, token, name) == {"main": c1}


class TestShallowMirror:
    """A mirror someone made shallow is deepened: ancestry, not a cut, decides the mode."""

    def test_a_fast_forward_onto_a_shallow_mirror_stays_incremental(
        self, published: Publish
    ) -> None:
        pub = published("shallow")
        pub.up.commit()
        c3 = pub.up.commit()
        # The mirror replaced by a depth-1 clone at c3: the indexed head c1 is cut off.
        mirror = _mirror(pub.settings, pub.name)
        shutil.rmtree(mirror)
        git("clone", "-q", "--mirror", "--depth", "1", pub.up.url, str(mirror))
        assert (mirror / "shallow").exists()

        job = pub.indexed(pub.c1, c3)
        assert job["state"] == "SUCCEEDED", job
        assert job["progress"]["mode"] == "incremental"
        assert job["progress"]["rewind"] is False  # a cut history would read as a rewind
        assert pub.heads() == {"main": c3}
        assert not (mirror / "shallow").exists()


class TestMirrorRemovedUnderARunningJob:
    """The mirror vanishes after the job fetched it: a typed failure, then a fresh clone."""

    def test_the_job_fails_typed_and_the_next_push_clones_again(self, published: Publish) -> None:
        pub = published("removed")
        c2 = pub.up.commit()
        mirror = _mirror(pub.settings, pub.name)
        client = redis.Redis.from_url(pub.settings.redis_url)
        # Holding the repository's lock parks the job right after its fetch, before
        # it reads the commit: the removal lands inside a running job every time.
        with locks.repository_lock(client, locks.lock_key("code", pub.name, "main"), "the test"):
            job_id = push(pub.base, pub.name, pub.c1, c2)
            deadline = time.monotonic() + 120
            while git("--git-dir", str(mirror), "rev-parse", "refs/heads/main") != c2:
                assert time.monotonic() < deadline, "the job never fetched"
                time.sleep(0.1)
            assert wait_job(pub.base, pub.token, job_id, timeout=5, until=("RUNNING",))
            shutil.rmtree(mirror)
        job = wait_job(pub.base, pub.token, job_id, timeout=120)
        assert job["state"] == "FAILED", job
        assert job["error"]["code"] == "git_error"
        assert "mirror was removed" in job["error"]["message"]
        assert str(pub.settings.mirrors_dir) not in str(job["error"])
        assert pub.heads() == {"main": pub.c1}

        again = pub.indexed(pub.c1, c2)
        assert again["state"] == "SUCCEEDED", again
        assert pub.heads() == {"main": c2}
        assert mirror.exists()

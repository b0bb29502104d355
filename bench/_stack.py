"""The real services a fault or load bench drives, started on ports of its own.

A :class:`BenchStack` starts a Neo4j and a Redis (strata.devstack) with data
under ``bench/.cache/<name>``, migrates, and stops what it started; the API
runs through :func:`strata.devstack.api.launch_api` and workers as real
``celery worker`` processes (prefork), the way ``strata up`` runs them. Shared
by bench/faults.py and bench/load.py; nothing here is imported by the product.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from strata import testing
from strata.devstack.api import launch_api
from strata.devstack.neo4j import Neo4jServer
from strata.devstack.procs import free_port
from strata.devstack.redis import RedisServer
from strata.devstack.worker import worker_command
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.registry import KeyRing, RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".cache"
# Throwaway credentials of services that live only as long as one bench run.
SECRET = "bench-webhook-secret-0123456789ab"  # noqa: S105
PASSWORD = "bench-neo4j-password"  # noqa: S105
SECRET_KEY = "bench-secret-key-0123456789abcdef0123"  # noqa: S105
ZERO = "0" * 40


def settings_env(settings: Settings) -> dict[str, str]:
    """The STRATA_* environment that reproduces ``settings`` in a child process."""
    env: dict[str, str] = {}
    for name, dumped in settings.model_dump(mode="json").items():
        raw = getattr(settings, name)
        value = raw.get_secret_value() if isinstance(raw, SecretStr) else dumped
        if value is not None:
            env[f"STRATA_{name.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env


@dataclass
class BenchStack:
    """Neo4j + Redis of one bench, its settings and a gateway."""

    name: str
    neo4j_port: int = 0
    redis_port: int = 0
    overrides: dict[str, Any] = field(default_factory=dict)
    var: Path = field(init=False)
    settings: Settings = field(init=False)
    neo4j: Neo4jServer = field(init=False)
    redis: RedisServer = field(init=False)
    gateway: Gateway = field(init=False)
    _started: list[Any] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.var = CACHE / self.name
        self.neo4j_port = self.neo4j_port or free_port()
        self.redis_port = self.redis_port or free_port()
        unique = uuid.uuid4().hex[:8]
        values: dict[str, Any] = {
            "environment": "test",
            "neo4j_uri": f"bolt://127.0.0.1:{self.neo4j_port}",
            "neo4j_password": PASSWORD,
            "redis_url": f"redis://127.0.0.1:{self.redis_port}/0",
            "secret_key": SECRET_KEY,
            "var_dir": self.var,
            "dev_neo4j_port": self.neo4j_port,
            "dev_redis_port": self.redis_port,
            "dev_neo4j_heap_mb": 768,
            "dev_neo4j_pagecache_mb": 128,
            "mirrors_dir": self.var / "mirrors",
            "log_json": False,
            "queue_code": f"code-{unique}",
            "queue_knowledge": f"knowledge-{unique}",
            "queue_trace": f"trace-{unique}",
            **self.overrides,
        }
        self.settings = Settings(**values)
        self.neo4j = Neo4jServer.from_settings(self.settings)
        self.redis = RedisServer.from_settings(self.settings)

    def __enter__(self) -> BenchStack:
        # The Neo4j runtime is shared with the checkout's var/cache (no second resolve).
        runtime = ROOT / "var" / "cache"
        link = self.var / "cache"
        if runtime.is_dir() and not link.exists():
            self.var.mkdir(parents=True, exist_ok=True)
            if link.is_symlink():  # dangling: made by a checkout that is gone
                link.unlink()
            link.symlink_to(runtime)
        if self.neo4j.start(timeout=180):
            self._started.append(self.neo4j)
        if self.redis.start():
            self._started.append(self.redis)
        self.gateway = Gateway.connect(self.settings)
        migrations.migrate(self.gateway, self.settings.migrations_dir)
        return self

    def __exit__(self, *_: object) -> None:
        self.gateway.close()
        for server in reversed(self._started):
            server.stop()

    def reconnect(self) -> None:
        """A fresh gateway (after Neo4j was restarted under the old one)."""
        self.gateway.close()
        self.gateway = Gateway.connect(self.settings)

    def register(self, name: str, path: Path, scopes: tuple[str, ...] = ("read",)) -> str:
        """Register a local repository; a key for it."""
        keys = ServerKeys(self.settings.secret_key.get_secret_value())
        RepoRegistry(self.gateway, keys).register(
            name=name, provider="github", secret=SECRET, path=str(path)
        )
        return self.key(name, scopes)

    def key(self, repo: str, scopes: tuple[str, ...] = ("read",)) -> str:
        """A new API key for one repository."""
        keys = ServerKeys(self.settings.secret_key.get_secret_value())
        _, token = KeyRing(self.gateway, keys).create(scopes=list(scopes), repos=[repo])
        return token

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, **settings_env(self.settings), **extra}


@contextmanager
def api_process(stack: BenchStack) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The API (the one launcher) on the stack's settings: (base URL, process)."""
    port = free_port()
    proc = launch_api("127.0.0.1", port, env=settings_env(stack.settings))
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@dataclass
class Worker:
    """A running ``celery worker`` (prefork) in its own process group."""

    proc: subprocess.Popen[bytes]
    log: Path

    def children(self) -> list[int]:
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(p) for p in path.read_text().split()] if path.exists() else []

    def kill(self) -> None:
        """SIGKILL the main process and its pool children, as an OOM kill would."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
        # Parse helpers of a killed child may outlive it in the group.
        with suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)


def start_worker(stack: BenchStack, *, concurrency: int = 1) -> Worker:
    """``celery -A strata_workers.main worker --pool prefork`` on the stack's queues."""
    logs = stack.var / "workers"
    logs.mkdir(parents=True, exist_ok=True)
    ready = logs / f"worker-{uuid.uuid4().hex[:8]}.ready"
    log = logs / f"{ready.stem}.log"
    argv = worker_command(
        list(stack.settings.queues.values()), ready.stem, concurrency=concurrency, pool="prefork"
    )
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            env=stack.env(STRATA_WORKER_READY_FILE=str(ready)),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    worker = Worker(proc, log)
    deadline = time.monotonic() + 90
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            worker.stop()
            raise RuntimeError(f"worker did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    return worker


def git(path: Path, *args: str, when: datetime | None = None) -> str:
    env = dict(os.environ)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when.isoformat()
    done = subprocess.run(
        ["git", "-C", str(path), *args], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.strip()


def generated_repo(path: Path, files: int, when: datetime) -> str:
    """A git repository of ``files`` small modules in 20 packages, each calling the
    next one; the sha of its one commit."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "bench@example.com")
    git(path, "config", "user.name", "Bench")
    for k in range(20):
        (path / f"pkg{k}").mkdir()
        (path / f"pkg{k}" / "__init__.py").write_text("")
    for i in range(files):
        j = (i + 1) % files
        (path / f"pkg{i % 20}" / f"mod{i}.py").write_text(
            f'"""Module {i}."""\nfrom pkg{j % 20}.mod{j} import helper_{j}\n\n\n'
            f"class Thing{i}:\n    def __init__(self, value):\n        self.value = value\n\n"
            f"    def run(self, x):\n        return helper_{j}(x) + self.value\n\n\n"
            f"def helper_{i}(x):\n    if x > {i}:\n        return x - 1\n    return x + 1\n\n\n"
            f"def main_{i}():\n    return Thing{i}(1).run(helper_{i}(2))\n"
        )
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", f"{files} modules", when=when)
    return git(path, "rev-parse", "HEAD")


def push_body(repo: str, before: str, after: str) -> bytes:
    return testing.push_payload(repo, before, after)


def push_headers(body: bytes, delivery: str | None = None) -> dict[str, str]:
    """The headers of a signed GitHub push delivery."""
    return testing.push_headers(body, SECRET, delivery=delivery)


def push(base: str, repo: str, after: str, *, before: str = ZERO) -> str:
    """A signed push webhook; the id of the reindex job it queued."""
    body = push_body(repo, before, after)
    answer = httpx.post(
        f"{base}/webhooks/github/{repo}", content=body, headers=push_headers(body), timeout=30
    )
    if answer.status_code != 202:
        raise RuntimeError(f"push refused: {answer.status_code} {answer.text}")
    job_id: str = answer.json()["jobs"][0]
    return job_id

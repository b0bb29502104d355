"""A real API process and a real prefork Celery worker process on their own queues.

The worker runs the way `strata up` and the Helm chart run it (``celery worker``,
prefork pool), so a task executes in a daemonic pool child: the place where
``multiprocessing`` refuses to start children and where a SIGKILL loses a job.
Each stack gets queues of its own, so no other test's worker takes its tasks.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from strata.devstack.api import launch_api
from strata.devstack.worker import worker_command
from strata.graph.gateway import Gateway
from strata.jobstore import JobRecord, JobStore
from strata.registry import KeyRing, RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from strata.testing import push_headers, push_payload
from tests.conftest import free_port, make_settings, settings_env
from tests.gitrepo import GitRepo

SECRET = "workers-webhook-secret-0123456789"
ZERO = "0" * 40
JOB = "query($id: ID!) { job(id: $id) { state error progress result startedAt finishedAt } }"


def stack_settings(unique: str, **overrides: Any) -> Settings:
    """Test settings with queues of this stack only."""
    return make_settings(
        queue_code=f"code-{unique}",
        queue_knowledge=f"knowledge-{unique}",
        queue_trace=f"trace-{unique}",
        **overrides,
    )


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    return dict(os.environ, **settings_env(settings), **extra)


@contextmanager
def api_process(settings: Settings) -> Iterator[str]:
    """The API process (the one launcher) on this stack's settings; yields its base URL."""
    port = free_port()
    proc = launch_api("127.0.0.1", port, env=settings_env(settings))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@dataclass
class Worker:
    """A running ``celery worker`` process (prefork) and its log."""

    proc: subprocess.Popen[bytes]
    log: Path

    def children(self) -> list[int]:
        """Pids of its pool children."""
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(p) for p in path.read_text().split()] if path.exists() else []

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool children), as an OOM kill would."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


@contextmanager
def worker_process(settings: Settings, tmp: Path, *, concurrency: int = 1) -> Iterator[Worker]:
    """``celery -A strata_workers.main worker --pool prefork`` on the stack's queues."""
    ready = tmp / f"worker-{uuid.uuid4().hex[:8]}.ready"
    log = tmp / f"{ready.stem}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            worker_command(
                list(settings.queues.values()), ready.stem, concurrency=concurrency, pool="prefork"
            ),
            env=_env(settings, STRATA_WORKER_READY_FILE=str(ready)),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a test can kill it whole
        )
    worker = Worker(proc, log)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"worker did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield worker
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def push(
    base: str,
    repo: str,
    before: str,
    after: str,
    *,
    ref: str = "refs/heads/main",
    forced: bool = False,
) -> str:
    """A signed GitHub push webhook; the id of the reindex job it queued."""
    body = push_payload(repo, before, after, ref=ref, forced=forced)
    answer = httpx.post(
        f"{base}/webhooks/github/{repo}",
        content=body,
        timeout=10,
        headers=push_headers(body, SECRET),
    )
    assert answer.status_code == 202, answer.text
    job_id: str = answer.json()["jobs"][0]
    return job_id


def register_repo(settings: Settings, gateway: Gateway, name: str, path: Path) -> str:
    """Register a local GitHub repository (webhook secret ``SECRET``); a read key for it."""
    keys = ServerKeys(settings.secret_key.get_secret_value())
    RepoRegistry(gateway, keys).register(
        name=name, provider="github", secret=SECRET, path=str(path)
    )
    _, token = KeyRing(gateway, keys).create(scopes=["read"], repos=[name])
    return token


def wait_running(jobs: JobStore, job_id: str, timeout: float = 120) -> JobRecord:
    """Wait until the job runs and has done some work (its progress has a phase)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = jobs.get(job_id)
        assert record.state in ("queued", "running"), record
        if record.state == "running" and record.progress.get("phase"):
            return record
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never started")


def gql(base: str, token: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.post(
        f"{base}/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    ).json()
    assert "errors" not in answer, answer
    data: dict[str, Any] = answer["data"]
    return data


def wait_job(
    base: str,
    token: str,
    job_id: str,
    *,
    timeout: float,
    until: tuple[str, ...] = ("SUCCEEDED", "FAILED"),
) -> dict[str, Any]:
    """Poll ``job(id)`` until its state is one of ``until`` (bounded)."""
    deadline = time.monotonic() + timeout
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        job = gql(base, token, JOB, {"id": job_id})["job"]
        if job["state"] in until:
            return job
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} still {job.get('state')} after {timeout:.0f}s: {job}")


def generated_repo(path: Path, files: int, when: Any) -> tuple[GitRepo, str]:
    """A repository of ``files`` small Python modules in 20 packages, each calling the next.

    ``pkgK/modI.py`` defines ``helper_I``, ``main_I`` and ``ThingI.run``;
    ``ThingI.run`` calls ``helper_(I+1)`` imported from the next module, so the
    callers of ``helper_0`` are ``main_0`` and ``Thing<files-1>.run``.
    """
    repo = GitRepo(path)
    for k in range(20):
        repo.write(f"pkg{k}/__init__.py", "")
    for i in range(files):
        repo.write(module_path(i), module_source(i, files))
    return repo, repo.commit(f"{files} modules", when)


def module_path(i: int) -> str:
    return f"pkg{i % 20}/mod{i}.py"


def module_source(i: int, files: int, extra: str = "") -> str:
    j = (i + 1) % files
    return f'''"""Module {i}."""
from pkg{j % 20}.mod{j} import helper_{j}


class Thing{i}:
    """A thing."""

    def __init__(self, value):
        self.value = value

    def run(self, x):
        return helper_{j}(x) + self.value


def helper_{i}(x):
    if x > {i}:
        return x - 1
    return x + 1


def main_{i}():
    return Thing{i}(1).run(helper_{i}(2))
{extra}'''


def push_new_repo(
    app: Any, gateway: Gateway, path: Path, files: int, when: Any
) -> tuple[str, dict[str, Any]]:
    """A generated repository of ``files`` modules at ``path`` (its name: the folder's),
    registered and pushed whole to ``app``'s stack; (its job id, the job at its end)."""
    settings = app.conf.strata_settings
    repo, head = generated_repo(path, files, when)
    token = register_repo(settings, gateway, path.name, repo.path)
    with api_process(settings) as base:
        job_id = push(base, path.name, ZERO, head)
        return job_id, wait_job(base, token, job_id, timeout=120)


@contextmanager
def solo_worker(settings: Settings) -> Iterator[Any]:
    """A Celery app for ``settings`` and an in-process ``solo`` worker on its queues
    (the process's worker context reset before and after, so no other test's leaks in)."""
    from celery.contrib.testing.worker import start_worker

    from strata_workers import context as worker_context_module
    from strata_workers.app import create_celery

    worker_context_module._context = None
    app = create_celery(settings)
    try:
        with start_worker(
            app,
            queues=list(settings.queues.values()),
            concurrency=1,
            pool="solo",
            perform_ping_check=False,
            shutdown_timeout=30,
        ):
            yield app
    finally:
        worker_context_module._context = None


def register(
    settings: Settings, gateway: Any, name: str, *, path: Path | None = None, url: str | None = None
) -> str:
    """Register ``name`` (a local clone's path, or a clone URL: a mirror) as a GitHub
    webhook target; a read key for it."""
    from strata.registry import KeyRing, RepoRegistry
    from strata.security import ServerKeys

    keys = ServerKeys(settings.secret_key.get_secret_value())
    RepoRegistry(gateway, keys).register(
        name=name, provider="github", secret=SECRET, path=str(path) if path else None, url=url
    )
    _, token = KeyRing(gateway, keys).create(scopes=["read"], repos=[name])
    return token


BRANCHES = "query($name: String!) { repository(name: $name) { branches { ref head } } }"


def heads(base: str, token: str, name: str) -> dict[str, str]:
    """The current head of each indexed branch of ``name``."""
    repo = gql(base, token, BRANCHES, {"name": name})["repository"]
    return {b["ref"]: b["head"] for b in repo["branches"]} if repo else {}


@contextmanager
def running_stack(tmp: Path, prefix: str, **overrides: Any) -> Iterator[tuple[Settings, str]]:
    """An API process and a prefork worker on queues of their own: (settings, base URL)."""
    from datetime import UTC, datetime

    settings = stack_settings(f"{prefix}-{datetime.now(UTC).strftime('%H%M%S%f')}", **overrides)
    with api_process(settings) as base, worker_process(settings, tmp):
        yield settings, base

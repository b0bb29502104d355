"""The whole local stack: Neo4j, Redis, migrations, the API and one worker per queue.

Used by ``strata up|down|status``. The API and workers run as their own
processes (uvicorn, celery); the core only starts them, it never imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from strata.devstack.api import api_healthy, launch_api
from strata.devstack.neo4j import Neo4jServer
from strata.devstack.procs import Proc, require_free_port, wait_until
from strata.devstack.redis import RedisServer
from strata.devstack.worker import READY_FILE_ENV, worker_command
from strata.errors import EnvironmentProblem
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.settings import Settings

Report = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ComponentStatus:
    name: str
    running: bool
    pid: int | None
    detail: str


def _proc(settings: Settings, name: str) -> Proc:
    return Proc(name, settings.var_dir / "run", settings.var_dir / "log")


def worker_ready_file(settings: Settings, queue: str) -> Path:
    return settings.var_dir / "run" / f"worker-{queue}.ready"


def _api_url(settings: Settings) -> str:
    return f"http://{settings.api_host}:{settings.api_port}"


def start_api(settings: Settings, *, timeout: float = 60.0) -> bool:
    proc = _proc(settings, "api")
    if proc.pid() is not None:
        return False
    require_free_port(
        settings.api_host, settings.api_port, what="the API", setting="STRATA_API_PORT"
    )
    launch_api(settings.api_host, settings.api_port, proc=proc, timeout=timeout)
    return True


def start_worker(settings: Settings, queue: str, *, timeout: float = 60.0) -> bool:
    proc = _proc(settings, f"worker-{queue}")
    if proc.pid() is not None:
        return False
    ready = worker_ready_file(settings, queue)
    ready.unlink(missing_ok=True)
    popen = proc.spawn(worker_command([queue], queue), env={READY_FILE_ENV: str(ready)})
    if not wait_until(ready.exists, timeout=timeout, alive=lambda: popen.poll() is None):
        proc.stop(timeout=10)
        raise EnvironmentProblem(
            f"the {queue} worker did not become ready; last log lines:\n{proc.tail()}",
            hint=f"full log: {proc.log_file}",
        )
    return True


def up(settings: Settings, report: Report) -> None:
    """Start every component that is not running yet, in dependency order."""
    neo4j = Neo4jServer.from_settings(settings)
    report("neo4j: " + ("started" if neo4j.start() else "already running") + f" at {neo4j.uri}")
    redis = RedisServer.from_settings(settings)
    report("redis: " + ("started" if redis.start() else "already running") + f" at {redis.url}")
    with Gateway.connect(settings) as gateway:
        applied = migrations.migrate(gateway, settings.migrations_dir)
    report(f"migrations: {len(applied)} applied now" if applied else "migrations: at head")
    api = _api_url(settings)
    report("api: " + ("started" if start_api(settings) else "already running") + f" at {api}")
    for queue in settings.queues.values():
        started = start_worker(settings, queue)
        report(f"worker {queue}: " + ("started" if started else "already running"))


def down(settings: Settings, report: Report) -> None:
    """Stop everything: index daemons and workers first (warm shutdown), Neo4j last."""
    from strata.indexd import client as index_daemons

    for pid in index_daemons.stop_all(settings):
        report(f"index daemon {pid}: stopped")
    for queue in settings.queues.values():
        if _proc(settings, f"worker-{queue}").stop(timeout=60):
            report(f"worker {queue}: stopped")
        worker_ready_file(settings, queue).unlink(missing_ok=True)
    if _proc(settings, "api").stop(timeout=20):
        report("api: stopped")
    if RedisServer.from_settings(settings).stop():
        report("redis: stopped")
    if Neo4jServer.from_settings(settings).stop():
        report("neo4j: stopped")


def status(settings: Settings) -> list[ComponentStatus]:
    """What runs, with a detail line each."""
    neo4j = Neo4jServer.from_settings(settings)
    redis = RedisServer.from_settings(settings)
    rows = [
        ComponentStatus("neo4j", neo4j.running(), neo4j.proc.pid(), neo4j.uri),
        ComponentStatus("redis", redis.running(), redis.proc.pid(), redis.url),
    ]
    api = _proc(settings, "api")
    healthy = api_healthy(_api_url(settings))
    rows.append(
        ComponentStatus(
            "api",
            api.pid() is not None,
            api.pid(),
            f"{_api_url(settings)} " + ("healthy" if healthy else "not answering"),
        )
    )
    for queue in settings.queues.values():
        worker = _proc(settings, f"worker-{queue}")
        ready = worker_ready_file(settings, queue).exists()
        rows.append(
            ComponentStatus(
                f"worker {queue}",
                worker.pid() is not None,
                worker.pid(),
                "ready" if ready else "not ready",
            )
        )
    from strata.indexd import client as index_daemons

    for daemon in index_daemons.running(settings):
        detail = f"`strata index` daemon since {daemon.get('started', '?')[:19]}"
        rows.append(ComponentStatus("index daemon", True, daemon["pid"], detail))
    return rows

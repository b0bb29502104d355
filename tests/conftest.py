"""Session-wide real services: a test Neo4j, a test Redis, migrated once.

They run on their own ports (17687, 16379; a free port instead when another
process holds one) with data under var/test, so a developer's `strata up`
stack is left alone. Tests isolate by data (unique
repository names), because Neo4j Community has one user database.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from strata.devstack.api import launch_api
from strata.devstack.neo4j import Neo4jServer
from strata.devstack.procs import Proc, free_port, port_open
from strata.devstack.redis import RedisServer
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.settings import PROJECT_ROOT, Settings

# Several checkouts or agents can test side by side with their own ports and
# data folder; STRATA_TEST_KEEP_SERVICES=1 leaves the services running after
# the session (faster re-runs; stop them with `strata dev ... stop`).
TEST_VAR = Path(os.environ.get("STRATA_TEST_VAR", str(PROJECT_ROOT / "var" / "test")))
KEEP_SERVICES = os.environ.get("STRATA_TEST_KEEP_SERVICES") == "1"
TEST_PASSWORD = "strata-test-password"
TEST_SECRET = "strata-test-secret-key-0123456789abcdef"


def service_port(name: str, default: int) -> int:
    """The port of the test service ``name``: STRATA_TEST_<NAME>_PORT if set, else the
    default, unless something that is not this data folder's service listens there
    (left by a run that was killed, or another checkout's): then a free port, so the
    suite starts its own service instead of failing every test that needs it."""
    chosen = os.environ.get(f"STRATA_TEST_{name.upper()}_PORT")
    if chosen is not None:
        return int(chosen)
    ours = Proc(name, TEST_VAR / "run", TEST_VAR / "log").pid() is not None
    if ours or not port_open("127.0.0.1", default):
        return default
    port = free_port()
    print(f"[tests] port {default} is taken by another {name}: the suite's {name} uses {port}")
    return port


NEO4J_PORT = service_port("neo4j", 17687)
REDIS_PORT = service_port("redis", 16379)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A test marked ``interpreted`` patches or weakly references the code layer's
    classes, which their compiled build (strata.code.native) does not allow: while
    this process runs the build, the test runs in a child pytest on the sources
    (STRATA_NATIVE=0), and passes or fails with it."""
    from strata.code import native

    if pyfuncitem.get_closest_marker("interpreted") is None or not native.guard().compiled:
        return None
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", pyfuncitem.nodeid],
        env={**os.environ, native.DISABLE_ENV: "0"},
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert child.returncode == 0, f"on the interpreted sources:\n{child.stdout}{child.stderr}"
    return True


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.integration)


def make_settings(**overrides: object) -> Settings:
    """Settings pointing at the test services (environment=test, real secrets)."""
    values: dict[str, object] = {
        "environment": "test",
        "neo4j_uri": f"bolt://127.0.0.1:{NEO4J_PORT}",
        "neo4j_password": TEST_PASSWORD,
        "redis_url": f"redis://127.0.0.1:{REDIS_PORT}/0",
        "secret_key": TEST_SECRET,
        "var_dir": TEST_VAR,
        "dev_neo4j_port": NEO4J_PORT,
        "dev_redis_port": REDIS_PORT,
        "dev_neo4j_heap_mb": 1024,
        "dev_neo4j_pagecache_mb": 256,
        "mirrors_dir": TEST_VAR / "mirrors",
        "log_json": False,
        # Searches in the test process's threads: the many short-lived test apps would
        # each spawn a pool (tests/integration/search/test_heavy_reads.py runs it).
        "api_heavy_workers": 0,
        # `strata index` in the test's own process; tests/integration/indexd runs the
        # daemon (one per data folder and settings would linger after every test).
        "index_daemon_idle_s": 0,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def settings() -> Settings:
    return make_settings()


@pytest.fixture(scope="session")
def neo4j_server(settings: Settings) -> Iterator[Neo4jServer]:
    server = Neo4jServer.from_settings(settings)
    started = server.start(timeout=180)
    yield server
    if started and not KEEP_SERVICES:
        server.stop()


@pytest.fixture(scope="session")
def redis_server(settings: Settings) -> Iterator[RedisServer]:
    server = RedisServer.from_settings(settings)
    started = server.start()
    yield server
    if started and not KEEP_SERVICES:
        server.stop()


@pytest.fixture(scope="session")
def gateway(settings: Settings, neo4j_server: Neo4jServer) -> Iterator[Gateway]:
    with Gateway.connect(settings) as gw:
        migrations.migrate(gw, settings.migrations_dir)
        yield gw


@pytest.fixture
def unique() -> str:
    """A fresh token to keep a test's data apart from every other test's."""
    return uuid.uuid4().hex[:12]


def settings_env(settings: Settings) -> dict[str, str]:
    """The STRATA_* environment that reproduces these settings in a child process."""
    env: dict[str, str] = {}
    for name, dumped in settings.model_dump(mode="json").items():
        raw = getattr(settings, name)
        value = raw.get_secret_value() if isinstance(raw, SecretStr) else dumped
        if value is None:
            continue
        env[f"STRATA_{name.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env


@pytest.fixture
def api_process(
    settings: Settings, gateway: Gateway, redis_server: RedisServer
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The real API process (uvicorn) on the test services: (base URL, process)."""
    port = free_port()
    proc = launch_api("127.0.0.1", port, env=settings_env(settings))
    base = f"http://127.0.0.1:{port}"
    try:
        yield base, proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)

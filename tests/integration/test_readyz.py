"""/readyz of the real API process follows Neo4j: 503 while it is down, 200 when it is back."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import redis

from strata.devstack.neo4j import Neo4jServer
from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.settings import Settings
from strata_api.health import check_ready


def _readyz(base: str) -> httpx.Response:
    return httpx.get(f"{base}/readyz", timeout=10)


def _wait_status(base: str, status: int, timeout: float) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        try:
            response = _readyz(base)
            if response.status_code == status or time.monotonic() > deadline:
                return response
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.3)


class TestReadiness:
    """The API stays up when Neo4j goes away and reports why it is not ready."""

    def test_readyz_follows_neo4j(
        self, api_process: tuple[str, subprocess.Popen[bytes]], neo4j_server: Neo4jServer
    ) -> None:
        base, proc = api_process
        assert _readyz(base).status_code == 200
        assert httpx.get(f"{base}/healthz", timeout=5).json() == {"status": "alive"}

        neo4j_server.stop()
        try:
            down = _wait_status(base, 503, timeout=30)
            assert down.status_code == 503
            body = down.json()
            assert body["status"] == "not ready"
            assert "not reachable" in body["checks"]["neo4j"]
            assert body["checks"]["redis"] == "ok"
            assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
        finally:
            neo4j_server.start(timeout=180)

        up = _wait_status(base, 200, timeout=60)
        assert up.status_code == 200, up.text
        assert up.json()["checks"] == {"neo4j": "ok", "migrations": "ok", "redis": "ok"}
        assert proc.poll() is None

    def test_readyz_reports_pending_migrations(
        self, settings: Settings, gateway: Gateway, redis_server: RedisServer, tmp_path: Path
    ) -> None:
        for path in settings.migrations_dir.glob("*.cypher"):
            shutil.copy(path, tmp_path / path.name)
        next_id = len(list(tmp_path.glob("*.cypher"))) + 1
        (tmp_path / f"{next_id:04d}_extra.cypher").write_text("RETURN 1;\n")
        client = redis.Redis.from_url(settings.redis_url)
        try:
            local = settings.model_copy(update={"migrations_dir": tmp_path})
            result = check_ready(local, gateway, client)
        finally:
            client.close()
        assert not result.ready
        assert result.checks["neo4j"] == "ok"
        assert result.checks["migrations"].startswith(f"pending: {next_id:04d}")

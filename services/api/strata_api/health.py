"""Liveness and readiness: /healthz says the process lives, /readyz that it can serve."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import redis
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from strata.errors import StrataError
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.settings import Settings

router = APIRouter()


@dataclass(slots=True)
class Readiness:
    ready: bool = True
    checks: dict[str, str] = field(default_factory=dict)

    def fail(self, name: str, reason: str) -> None:
        self.ready = False
        self.checks[name] = reason


def check_ready(settings: Settings, gateway: Gateway, redis_client: redis.Redis) -> Readiness:
    """Neo4j answers, migrations are at head, Redis answers (blocking; run in a thread)."""
    result = Readiness()
    try:
        gateway.ping(timeout=2.0)
        result.checks["neo4j"] = "ok"
    except StrataError as exc:
        result.fail("neo4j", exc.message)
        result.fail("migrations", "unknown (neo4j unavailable)")
    if result.ready:
        try:
            state = migrations.status(gateway, settings.migrations_dir)
        except StrataError as exc:
            result.fail("migrations", exc.message)
        else:
            if state.at_head:
                result.checks["migrations"] = "ok"
            else:
                pending = ", ".join(f"{m:04d}" for m in state.pending)
                result.fail("migrations", f"pending: {pending} (run `strata migrate`)")
    try:
        redis_client.ping()
        result.checks["redis"] = "ok"
    except redis.RedisError as exc:
        result.fail("redis", f"Redis is not reachable: {exc}")
    return result


@router.get("/healthz", include_in_schema=False)
async def healthz() -> dict[str, str]:
    return {"status": "alive"}


@router.get("/readyz", include_in_schema=False)
async def readyz(request: Request) -> JSONResponse:
    state = request.app.state
    result = await asyncio.to_thread(check_ready, state.settings, state.gateway, state.redis)
    return JSONResponse(
        {"status": "ready" if result.ready else "not ready", "checks": result.checks},
        status_code=200 if result.ready else 503,
    )

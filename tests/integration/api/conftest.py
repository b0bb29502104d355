"""The real API app on the test Neo4j and Redis, driven through its lifespan.

Each test gets its own code queue (``code-<unique>``), so "nothing was
enqueued" is a plain ``LLEN`` of that Redis list, and its own repository names.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import redis

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.registry import KeyRing, RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from strata_api.app import create_app
from tests.conftest import TEST_SECRET

with warnings.catch_warnings():
    # Starlette suggests httpx2 for its TestClient; httpx is what the project pins.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient

WEBHOOK_SECRET = "a-webhook-secret-0123456789"
SHA_A = "a" * 40
SHA_B = "b" * 40


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class Api:
    """One running app plus the handles a test needs to look behind it."""

    client: TestClient
    settings: Settings
    redis: redis.Redis
    registry: RepoRegistry
    keys: KeyRing

    def queued(self) -> int:
        """Tasks waiting in this app's code queue (nothing consumes it in these tests)."""
        return int(self.redis.llen(self.settings.queue_code))

    def key(self, scopes: str = "read", repos: str = "*") -> str:
        _, token = self.keys.create(scopes=scopes.split(","), repos=repos.split(","))
        return token

    def gql(self, query: str, token: str | None, variables: dict[str, Any] | None = None) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.client.post(
            "/graphql", json={"query": query, "variables": variables or {}}, headers=headers
        )

    def register(self, name: str, provider: str = "github", **extra: Any) -> None:
        self.registry.register(
            name=name,
            provider=provider,
            secret=WEBHOOK_SECRET,
            url=f"https://git.example/{name}",
            **extra,
        )

    def push(
        self,
        provider: str,
        repo: str,
        payload: dict[str, Any] | bytes,
        headers: dict[str, str],
    ) -> Any:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        return self.client.post(
            f"/webhooks/{provider}/{repo}",
            content=body,
            headers={"Content-Type": "application/json", **headers},
        )


@pytest.fixture
def make_api(
    settings: Settings, gateway: Gateway, redis_server: RedisServer, unique: str
) -> Iterator[Callable[..., Any]]:
    """A context manager factory: ``with make_api(**setting_overrides) as api: ...``."""
    client = redis.Redis.from_url(settings.redis_url)
    keys = ServerKeys(TEST_SECRET)

    @contextmanager
    def factory(**overrides: Any) -> Iterator[Api]:
        values = {"queue_code": f"code-{unique}", "api_key_cache_s": 0.0, **overrides}
        local = Settings(**(settings.model_dump() | values))
        with TestClient(create_app(local)) as test_client:
            yield Api(
                client=test_client,
                settings=local,
                redis=client,
                registry=RepoRegistry(gateway, keys),
                keys=KeyRing(gateway, keys),
            )

    yield factory
    client.close()


@pytest.fixture
def api(make_api: Callable[..., Any]) -> Iterator[Api]:
    with make_api() as running:
        yield running

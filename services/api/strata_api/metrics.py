"""Prometheus metrics: request latency per route and per GraphQL operation,
webhook outcomes, and queue depth read from Redis at scrape time.

Every app gets its own registry (several apps can live in one process, as in
the tests). Label values are bounded: routes are path templates, operation
names are sanitised and capped in number, providers and results are fixed sets.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator

import redis
from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.extensions import SchemaExtension

from strata.errors import Unauthorized
from strata.security import same
from strata.settings import Settings

_OPERATION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
MAX_OPERATION_NAMES = 200
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class QueueDepth(Collector):
    """``strata_queue_depth{queue}``: LLEN of each Celery queue, read at scrape time."""

    def __init__(self, queues: dict[str, str], client: Callable[[], redis.Redis | None]) -> None:
        self._queues = queues
        self._client = client

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(
            "strata_queue_depth", "Tasks waiting in each queue (Redis LLEN).", labels=["queue"]
        )
        client = self._client()
        if client is not None:
            for queue in sorted(set(self._queues.values())):
                try:
                    depth = int(client.llen(queue))
                except redis.RedisError:
                    continue  # Redis down: no sample, rather than a false zero
                family.add_metric([queue], depth)
        yield family


class Metrics:
    """The metric objects of one app."""

    def __init__(self, settings: Settings, client: Callable[[], redis.Redis | None]) -> None:
        self.registry = CollectorRegistry()
        self.http = Histogram(
            "strata_http_request_duration_seconds",
            "HTTP request latency by route template, method and status.",
            ["route", "method", "status"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.graphql = Histogram(
            "strata_graphql_operation_duration_seconds",
            "GraphQL operation latency by operation name.",
            ["operation"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.webhooks = Counter(
            "strata_webhook_deliveries",
            "Webhook deliveries by provider and outcome.",
            ["provider", "result"],
            registry=self.registry,
        )
        self.registry.register(QueueDepth(settings.queues, client))
        self._names: set[str] = set()
        self._lock = threading.Lock()

    def operation_label(self, name: str | None) -> str:
        if not name:
            return "anonymous"
        if not _OPERATION.match(name):
            return "invalid"
        with self._lock:
            if name in self._names:
                return name
            if len(self._names) >= MAX_OPERATION_NAMES:
                return "other"
            self._names.add(name)
        return name

    def webhook(self, provider: str, result: str) -> None:
        self.webhooks.labels(provider=provider, result=result).inc()


class HttpMetrics:
    """Pure ASGI middleware timing every HTTP request by route template."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = getattr(scope.get("route"), "path", None)
            if route is None:
                path = str(scope.get("path", ""))
                route = "/webhooks/*" if path.startswith("/webhooks/") else "unmatched"
            self.metrics.http.labels(
                route=route, method=str(scope.get("method", "")), status=str(status)
            ).observe(time.perf_counter() - started)


class OperationMetrics(SchemaExtension):
    """Times each GraphQL operation, labelled by its (bounded) operation name."""

    def __init__(self, *, metrics: Metrics) -> None:
        self.metrics = metrics

    def on_operation(self) -> Iterator[None]:
        started = time.perf_counter()
        yield
        label = self.metrics.operation_label(self.execution_context.operation_name)
        self.metrics.graphql.labels(operation=label).observe(time.perf_counter() - started)


router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics_endpoint(request: Request) -> Response:
    settings: Settings = request.app.state.settings
    if settings.metrics_token is not None:
        presented = request.headers.get("authorization", "")
        expected = f"Bearer {settings.metrics_token.get_secret_value()}"
        if not same(presented, expected):
            raise Unauthorized("metrics need `Authorization: Bearer <STRATA_METRICS_TOKEN>`")
    metrics: Metrics = request.app.state.metrics
    body = await asyncio.to_thread(generate_latest, metrics.registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)

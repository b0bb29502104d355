"""FastAPI application factory: GraphQL, webhooks, health, metrics, and their guards.

Middleware, outermost first: request id and access log, latency metrics, body
size caps. ``/graphql`` is POST-only JSON behind authentication and per-key
rate limiting; GraphiQL (GET, development only) is the one exception.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Annotated

import redis
from fastapi import Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.routing import APIRoute
from strawberry.http.ides import get_graphql_ide_html

from strata.errors import StrataError
from strata.graph.gateway import Gateway
from strata.jobstore import JobStore
from strata.ontology import load_ontology
from strata.registry import PROVIDERS, KeyRing, RepoRegistry
from strata.security import Principal, ServerKeys
from strata.settings import Settings
from strata_api import health, metrics, webhooks
from strata_api.auth import Authenticator, check_auth_settings, require_principal
from strata_api.bodylimit import BodyLimit
from strata_api.graphql.context import Context
from strata_api.graphql.errors import client_view
from strata_api.graphql.router import StrataGraphQLRouter
from strata_api.graphql.schema import build_schema
from strata_api.heavy import HeavyReads
from strata_api.metrics import HttpMetrics, Metrics, OperationMetrics
from strata_api.middleware import RequestContext
from strata_api.ratelimit import RateLimited, RateLimiter
from strata_api.tasks import TaskSender


class UnsupportedMediaType(StrataError):
    """/graphql takes ``application/json`` bodies only."""

    code = "unsupported_media_type"
    http_status = 415


def _error_response(request: Request, exc: Exception) -> Response:
    """One translation of StrataError to HTTP for everything outside GraphQL execution."""
    assert isinstance(exc, StrataError)
    settings: Settings = request.app.state.settings
    message, extensions = client_view(exc, expose_internal=settings.is_development)
    headers: dict[str, str] = {}
    if exc.http_status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="strata"'
    if isinstance(exc, RateLimited):
        headers["Retry-After"] = str(exc.retry_after)
    return JSONResponse(
        {"errors": [{"message": message, "extensions": extensions}]},
        status_code=exc.http_status,
        headers=headers,
    )


async def _require_json(request: Request) -> None:
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise UnsupportedMediaType("send the GraphQL request as application/json")


def create_app(settings: Settings) -> FastAPI:
    """Build the app for these settings; connections open in the lifespan."""
    keys = ServerKeys(settings.secret_key.get_secret_value())
    metric_set = Metrics(settings, lambda: getattr(app.state, "redis", None))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = app.state
        state.settings = settings
        state.metrics = metric_set
        state.gateway = Gateway.connect(settings)
        state.ontology = load_ontology(settings.ontology_dir)
        state.redis = redis.Redis.from_url(
            settings.redis_url, socket_connect_timeout=1.0, socket_timeout=2.0
        )
        state.jobs = JobStore(state.redis)
        state.tasks = TaskSender(settings)
        state.registry = RepoRegistry(state.gateway, keys)
        state.authenticator = Authenticator(settings, KeyRing(state.gateway, keys), keys)
        state.rate_limiter = RateLimiter(state.redis, settings.rate_limit_per_minute)
        state.heavy = HeavyReads.started(settings, state.gateway, state.ontology, state.registry)
        state.webhooks = webhooks.WebhookReceiver(
            settings=settings,
            registry=state.registry,
            jobs=state.jobs,
            tasks=state.tasks,
            client=state.redis,
            metrics=metric_set,
        )
        try:
            yield
        finally:
            state.heavy.close()
            state.tasks.close()
            state.gateway.close()
            state.redis.close()

    async def get_context(
        request: Request,
        _json: Annotated[None, Depends(_require_json)],
        principal: Annotated[Principal, Depends(require_principal)],
    ) -> Context:
        state = request.app.state
        return Context(
            settings=state.settings,
            gateway=state.gateway,
            principal=principal,
            job_store=state.jobs,
            task_sender=state.tasks,
            registry=state.registry,
            ontology_model=state.ontology,
            heavy=state.heavy,
        )  # the time budget starts now (Context.deadline)

    check_auth_settings(settings)  # fail at start-up, not on the first request

    app = FastAPI(
        title="Strata",
        lifespan=lifespan,
        docs_url="/docs" if settings.is_development else None,
        redoc_url=None,
        openapi_url="/openapi.json" if settings.is_development else None,
    )
    app.state.settings = settings
    schema = build_schema(settings, extensions=[partial(OperationMetrics, metrics=metric_set)])
    graphql = StrataGraphQLRouter(
        schema,
        path="/graphql",  # a full path, so route templates in metrics read "/graphql"
        context_getter=get_context,
        graphql_ide=None,
        allow_queries_via_get=False,
        subscription_protocols=(),
    )
    # POST only: no GET queries (CSRF-safe), no websocket (no subscriptions).
    graphql.routes = [
        r for r in graphql.routes if isinstance(r, APIRoute) and "POST" in (r.methods or ())
    ]

    @app.get("/graphql", include_in_schema=False)
    async def graphql_get(request: Request) -> Response:
        if settings.is_development and "text/html" in request.headers.get("accept", ""):
            return HTMLResponse(get_graphql_ide_html(graphql_ide="graphiql"))
        return PlainTextResponse(
            "GraphQL takes POST with an application/json body",
            status_code=405,
            headers={"Allow": "POST"},
        )

    app.include_router(graphql)
    app.include_router(webhooks.router)
    app.include_router(metrics.router)
    app.include_router(health.router)
    app.add_exception_handler(StrataError, _error_response)

    def rejected(path: str) -> None:
        parts = path.split("/")
        if len(parts) > 2 and parts[1] == "webhooks":
            provider = parts[2] if parts[2] in PROVIDERS else "unknown"
            metric_set.webhook(provider, "too_large")

    app.add_middleware(
        BodyLimit,
        limits=[
            ("/graphql", settings.graphql_max_body_bytes),
            ("/webhooks", settings.webhook_max_body_bytes),
        ],
        on_reject=rejected,
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
    app.add_middleware(HttpMetrics, metrics=metric_set)
    app.add_middleware(RequestContext)
    return app

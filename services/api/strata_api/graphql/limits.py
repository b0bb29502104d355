"""The GraphQL document limits in force, and the schema extensions that enforce them.

Every document is checked before anything executes: tokens (strawberry's
``MaxTokensLimiter``), depth (``QueryDepthLimiter``, which also survives
circular fragments), aliases (``MaxAliasesLimiter``), and our
:class:`~strata_api.graphql.cost.CostLimiter`, which multiplies by the page
sizes a query asks for. Body size is capped before that
(:class:`strata_api.bodylimit.BodyLimit`, 413) and execution runs under the
request's time budget (:class:`strata_api.graphql.router.StrataGraphQLRouter`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from strawberry.extensions import (
    DisableIntrospection,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    QueryDepthLimiter,
    SchemaExtension,
)

from strata.code.reads import MAX_FIRST
from strata.settings import Settings
from strata_api.graphql.cost import CostLimiter, ValidationCache
from strata_api.graphql.errors import ErrorTranslation

ExtensionFactory = Callable[[], SchemaExtension]


@dataclass(frozen=True, slots=True)
class Limits:
    """The GraphQL limits in force; defaults equal the settings' defaults."""

    max_depth: int = 10
    max_aliases: int = 15
    max_tokens: int = 2000
    max_cost: int = 5000
    default_page_size: int = 10
    max_page_size: int = 100
    development: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            max_depth=settings.graphql_max_depth,
            max_aliases=settings.graphql_max_aliases,
            max_tokens=settings.graphql_max_tokens,
            max_cost=settings.graphql_max_cost,
            default_page_size=settings.graphql_default_page_size,
            # What Context.page() lets through, so validation and resolvers agree.
            max_page_size=min(MAX_FIRST, settings.graphql_max_page_size),
            development=settings.is_development,
        )


def hardening_extensions(limits: Limits) -> list[ExtensionFactory]:
    """Per-request factories (never shared instances) for the schema's extensions."""
    factories: list[ExtensionFactory] = [
        partial(ErrorTranslation, expose_internal=limits.development),
        partial(MaxTokensLimiter, max_token_count=limits.max_tokens),
        partial(QueryDepthLimiter, max_depth=limits.max_depth),
        partial(MaxAliasesLimiter, max_alias_count=limits.max_aliases),
        partial(CostLimiter, limits=limits, cache=ValidationCache()),
    ]
    if not limits.development:
        factories.insert(1, DisableIntrospection)
    return factories

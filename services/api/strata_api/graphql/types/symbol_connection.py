"""A page of symbols, Relay-style (the edge type belongs to its connection)."""

from __future__ import annotations

from collections.abc import Sequence

import strawberry

from strata.code.reads import SymbolView
from strata_api.graphql.arguments import encode_cursor
from strata_api.graphql.cost import WITHIN_PAGE
from strata_api.graphql.types.page_info import PageInfo
from strata_api.graphql.types.symbol import Symbol


@strawberry.type
class SymbolEdge:
    cursor: str
    node: Symbol


@strawberry.type(description="A page of symbols (Relay-style).")
class SymbolConnection:
    edges: list[SymbolEdge] = strawberry.field(metadata={WITHIN_PAGE: True})
    page_info: PageInfo

    @classmethod
    def from_domain(cls, views: Sequence[SymbolView], first: int) -> SymbolConnection:
        """The first ``first`` of ``views``; one more than ``first`` means a next page."""
        edges = [
            SymbolEdge(cursor=encode_cursor(v.key), node=Symbol.from_domain(v))
            for v in views[:first]
        ]
        return cls(
            edges=edges,
            page_info=PageInfo(
                has_next_page=len(views) > first,
                end_cursor=edges[-1].cursor if edges else None,
            ),
        )

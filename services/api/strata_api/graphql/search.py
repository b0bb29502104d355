"""The ``search`` query: hybrid search over one repository, as of a moment."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import strawberry
from strawberry.types import Info
from strawberry.types.nodes import SelectedField, Selection

from strata.search.service import SearchResult as ResultView
from strata.search.text import check_first
from strata.security import Principal
from strata_api.graphql.absence import say_why
from strata_api.graphql.types.asof import AsOfInput
from strata_api.graphql.types.search import DEFAULT_FIRST, SearchResult


def _check_pages(selections: Iterable[Selection]) -> None:
    """Refuse a bad ``files(first:)`` before any search runs: refused in the field
    itself, a sibling's search (``hits``) could still be running when the answer went
    out (and, at shutdown, use a connection the closing driver was taking away)."""
    for selection in selections:
        if isinstance(selection, SelectedField) and selection.name == "files":
            first = selection.arguments.get("first", DEFAULT_FIRST)
            # A literal arrives as its text (the schema already checked it is an Int).
            check_first(int(first) if isinstance(first, str) else first)
        elif not isinstance(selection, SelectedField):  # a fragment: its own selections
            _check_pages(selection.selections)


def _readable(info: Info[Any, Any]) -> list[str] | None:
    principal = getattr(info.context, "principal", None)
    if not isinstance(principal, Principal):
        principal = Principal.nobody()
    readable = principal.readable_repos()
    return None if readable.all else sorted(readable.names)


@strawberry.type
class SearchQuery:
    @strawberry.field(
        description=(
            "Full text, vectors and graph proximity fused by reciprocal rank; every hit "
            "says which retrievers found it and cites path, lines and commit."
        )
    )
    async def search(
        self,
        info: Info[Any, Any],
        query: str,
        repository: str,
        layers: list[str] | None = None,
        kinds: list[str] | None = None,
        ref: str | None = None,
        as_of: AsOfInput | None = None,
    ) -> SearchResult:
        for field in info.selected_fields:
            _check_pages(field.selections)
        ctx = info.context
        pair = AsOfInput.resolve(as_of)
        repos = _readable(info)

        async def run(first: int) -> ResultView:
            # Off the API process: cheap reads never wait behind a search (strata_api.heavy).
            found: ResultView = await ctx.heavy_reads.search(
                ctx.remaining(),
                query=query,
                repository=repository,
                layers=layers,
                kinds=kinds,
                first=first,
                ref=ref,
                as_of=pair,
                repos=repos,
            )
            if not found.hits:  # an unknown repository was refused above: is it the moment?
                await say_why(info, repository, pair)
            return found

        return SearchResult.lazy(query, repository, run)

"""Code-layer queries: symbols, callers and callees, impact, history and changes.

Every field takes an optional ``asOf`` (default: now, now), reads through the
core's as-of queries off the event loop within the request's budget
(``Context.run``), and filters by the caller's readable repositories: a symbol
of a repository the key cannot read simply does not exist for it.
"""

from __future__ import annotations

import asyncio
import functools
from datetime import datetime
from typing import Any

import strawberry

from strata.code.reads import MAX_DEPTH, MAX_FIRST, CallList
from strata.graph.absence import cut_lists
from strata.search.lookup import fuzzy_symbols
from strata.temporal import AsOf
from strata_api.graphql.absence import checked_key, read_or_say_why, say_why
from strata_api.graphql.arguments import bounded, decode_cursor
from strata_api.graphql.context import Info
from strata_api.graphql.types.asof import AsOfInput
from strata_api.graphql.types.call import CallEdge, Impact, UnresolvedCalls
from strata_api.graphql.types.call_page import CallPage, page_offset
from strata_api.graphql.types.entity_kind import EntityKind
from strata_api.graphql.types.file import File
from strata_api.graphql.types.history import Axis, Change, FactVersion
from strata_api.graphql.types.repository import Repository
from strata_api.graphql.types.symbol import Symbol
from strata_api.graphql.types.symbol_connection import SymbolConnection
from strata_api.graphql.types.symbol_filter import SymbolFilter

MAX_CHANGES = 500


def _page_field(direction: str, description: str) -> Any:
    """``callersPage`` / ``calleesPage``: one resolver shape, two directions."""

    async def resolve(
        info: Info,
        symbol: strawberry.ID,
        depth: int = 1,
        first: int = 10,
        after: str | None = None,
        as_of: AsOfInput | None = None,
    ) -> CallPage:
        # The whole walk is read once and cut here: its order is stable, so is an offset.
        first = info.context.page(first)
        offset = page_offset(after)
        found = await _walk(info, direction, str(symbol), depth, MAX_FIRST, as_of)
        return CallPage.from_domain(found, offset, first)

    return strawberry.field(
        resolver=resolve,
        description=description + " that says whether there are more "
        "(pageInfo.hasNextPage, totalCount); page on with `after`.",
    )


@strawberry.type
class CodeQuery:
    @strawberry.field(description="A symbol by id (its stable key) as of a moment.")
    async def symbol(
        self, info: Info, id: strawberry.ID, as_of: AsOfInput | None = None
    ) -> Symbol | None:
        context = info.context
        key = str(id)
        repo, _ = checked_key(info, key, "Symbol")
        when = AsOfInput.resolve(as_of)
        view = await read_or_say_why(
            info,
            repo,
            when,
            lambda: context.run(context.code.symbol, key, when, repos=context.readable_names()),
            key=key,
            one=True,
        )
        return Symbol.from_domain(view) if view else None

    @strawberry.field(description="Symbols by name, qualified name or path prefix (paged).")
    async def symbols(
        self,
        info: Info,
        filter: SymbolFilter,
        first: int = 20,
        after: str | None = None,
        as_of: AsOfInput | None = None,
    ) -> SymbolConnection:
        context = info.context
        first = context.page(first)
        filter.require_selective()
        fuzzy = filter.fuzzy()
        reader = (
            functools.partial(
                fuzzy_symbols,
                context.gateway,
                name_contains=filter.name_contains,
                qualified_name_suffix=filter.qualified_name_suffix,
            )
            if fuzzy
            else context.code.find_symbols
        )
        when = AsOfInput.resolve(as_of)
        views = await context.run(
            reader,
            when,
            name=filter.name,
            qualified_name=filter.qualified_name,
            repo=filter.repository,
            ref=filter.ref,
            path=filter.path,
            kind=filter.kind,
            first=first + 1,
            after=decode_cursor(after),
            repos=context.readable_names(),
        )
        if not views and filter.repository is not None and not after:
            await say_why(
                info,
                filter.repository,
                when,
                readable=context.principal.can_read(filter.repository),
            )
        return SymbolConnection.from_domain(views, first)

    @strawberry.field(description="Who calls the symbol, up to `depth` hops (max 5).")
    async def callers(
        self,
        info: Info,
        symbol: strawberry.ID,
        depth: int = 1,
        first: int = 10,
        as_of: AsOfInput | None = None,
    ) -> list[CallEdge]:
        first = info.context.page(first)
        return [
            CallEdge.from_domain(h)
            for h in await _walk(info, "callers", str(symbol), depth, first, as_of)
        ]

    callers_page = _page_field(
        "callers", "Who calls the symbol, up to `depth` hops (max 5), as a page"
    )

    @strawberry.field(description="What the symbol calls, up to `depth` hops (max 5).")
    async def callees(
        self,
        info: Info,
        symbol: strawberry.ID,
        depth: int = 1,
        first: int = 10,
        as_of: AsOfInput | None = None,
    ) -> list[CallEdge]:
        first = info.context.page(first)
        return [
            CallEdge.from_domain(h)
            for h in await _walk(info, "callees", str(symbol), depth, first, as_of)
        ]

    callees_page = _page_field(
        "callees", "What the symbol calls, up to `depth` hops (max 5), as a page"
    )

    @strawberry.field(
        description="Transitive callers up to the entrypoints they reach, and the tests that "
        "exercise the symbol or its callers. Name-only guesses are left out unless "
        "`includeGuesses`."
    )
    async def impact(
        self,
        info: Info,
        symbol: strawberry.ID,
        first: int = 50,
        as_of: AsOfInput | None = None,
        include_guesses: bool = False,
    ) -> Impact:
        context = info.context
        first = context.page(first)
        key = str(symbol)
        repo, label = checked_key(info, key)
        when = AsOfInput.resolve(as_of)
        if not context.principal.can_read(repo):
            await say_why(info, repo, when, label=label, key=key, readable=False)
            return Impact(callers=[], entrypoints=[], tests=[])
        # One more than shown, so each list knows whether it was cut.
        view = await context.run(
            context.code.impact,
            key,
            when,
            first=first + 1,
            repos=context.readable_names(),
            include_guesses=include_guesses,
        )
        if not view.callers:
            await say_why(info, repo, when, label=label, key=key)
        lists = {"callers": view.callers, "entrypoints": view.entrypoints, "tests": view.tests}
        cut = cut_lists(lists, first, total=view.total, cap=MAX_FIRST)
        return Impact(
            callers=[CallEdge.from_domain(h) for h in view.callers[:first]],
            entrypoints=[CallEdge.from_domain(h) for h in view.entrypoints[:first]],
            tests=[CallEdge.from_domain(h) for h in view.tests[:first]],
            unresolved=UnresolvedCalls.from_domain(view.unresolved),
            total_callers=view.total,
            truncated=bool(cut),
            truncated_lists=cut,
        )

    @strawberry.field(description="Every version of an entity's state, with its four times.")
    async def history(
        self, info: Info, id: strawberry.ID, kind: EntityKind = EntityKind.SYMBOL
    ) -> list[FactVersion]:
        context = info.context
        key = str(id)
        repo, _ = checked_key(info, key, kind.value)
        if kind == EntityKind.SYMBOL:  # its versions' spans, from the File layouts (v4)
            history = functools.partial(context.code.history, key)
        else:
            history = functools.partial(context.graph.state_history, kind.value, key)
        versions = await read_or_say_why(
            info,
            repo,
            AsOf.at(),
            lambda: context.run(history, limit=MAX_CHANGES),
            label=kind.value,
            key=key,
        )
        return [FactVersion.from_domain(v) for v in versions or []]

    @strawberry.field(description="Facts opened and closed in a repository between two instants.")
    async def changes(
        self,
        info: Info,
        repository: str,
        start: datetime,
        end: datetime,
        axis: Axis = Axis.VALID,
        first: int = 100,
    ) -> list[Change]:
        context = info.context
        first = context.page(first)
        # Reads.changes takes no timeout yet; the router's budget still ends the request.
        found = await read_or_say_why(
            info,
            repository,
            window_end(end, axis),
            lambda: asyncio.to_thread(
                context.graph.changes, repository, start, end, axis=axis.value, limit=first
            ),
        )
        return [Change.from_domain(c) for c in found or []]

    @strawberry.field(description="A repository and its indexed refs, as of a moment.")
    async def repository(
        self, info: Info, name: str, as_of: AsOfInput | None = None
    ) -> Repository | None:
        context = info.context
        when = AsOfInput.resolve(as_of)
        views = await read_or_say_why(
            info, name, when, lambda: context.run(context.code.branches, name, when)
        )
        return Repository.from_domain(name, views) if views else None

    @strawberry.field(description="A file of a repository at a ref, as of a moment.")
    async def file(
        self,
        info: Info,
        repository: str,
        path: str,
        ref: str = "main",
        as_of: AsOfInput | None = None,
    ) -> File | None:
        context = info.context
        key = context.ontology.node("File").make_key({"repo": repository, "ref": ref, "path": path})
        when = AsOfInput.resolve(as_of)
        found = await read_or_say_why(
            info,
            repository,
            when,
            lambda: context.run(context.code.file, key, when, repos=context.readable_names()),
            label="File",
            key=key,
            one=True,
        )
        if found is None:
            return None
        node, state = found
        return File.from_domain(key, repository, ref, node, state)


async def _walk(
    info: Info,
    direction: str,
    key: str,
    depth: int,
    first: int,
    as_of: AsOfInput | None,
) -> CallList:
    """The walk's first ``first`` hits (the whole walk for ``MAX_FIRST``), with its total."""
    context = info.context
    depth = bounded("depth", depth, 1, MAX_DEPTH)
    repo, label = checked_key(info, key)
    resolved = AsOfInput.resolve(as_of)
    if not context.principal.can_read(repo):
        await say_why(info, repo, resolved, label=label, key=key, readable=False)
        return CallList([], total=0, unresolved=None)
    reads = context.code
    if direction == "callers":
        # The unresolved count (two more queries) is impact's and the context pack's: skipped.
        hits = await context.run(
            reads.callers,
            key,
            resolved,
            depth=depth,
            first=first,
            unresolved=False,
            repos=context.readable_names(),
        )
    else:
        hits = await context.run(
            reads.callees,
            key,
            resolved,
            depth=depth,
            first=first,
            repos=context.readable_names(),
        )
    if not hits:
        await say_why(info, repo, resolved, label=label, key=key)
    return hits


def window_end(end: datetime, axis: Axis) -> AsOf:
    """The moment a [start, end) window of changes is judged at: its end, on its axis
    (a window that ends inside the indexed history overlaps it)."""
    return AsOf.at(valid_at=end) if axis is Axis.VALID else AsOf.at(known_at=end)

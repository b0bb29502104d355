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

import strawberry

from strata.code.reads import MAX_DEPTH
from strata.search.lookup import fuzzy_symbols
from strata_api.graphql.arguments import bounded, decode_cursor, repo_of_key
from strata_api.graphql.context import Info
from strata_api.graphql.types.asof import AsOfInput
from strata_api.graphql.types.call import CallEdge, Impact, UnresolvedCalls
from strata_api.graphql.types.entity_kind import EntityKind
from strata_api.graphql.types.file import File
from strata_api.graphql.types.history import Axis, Change, FactVersion
from strata_api.graphql.types.repository import Repository
from strata_api.graphql.types.symbol import Symbol
from strata_api.graphql.types.symbol_connection import SymbolConnection
from strata_api.graphql.types.symbol_filter import SymbolFilter

MAX_CHANGES = 500


@strawberry.type
class CodeQuery:
    @strawberry.field(description="A symbol by id (its stable key) as of a moment.")
    async def symbol(
        self, info: Info, id: strawberry.ID, as_of: AsOfInput | None = None
    ) -> Symbol | None:
        context = info.context
        if not context.principal.can_read(repo_of_key(str(id))):
            return None
        view = await context.run(
            context.code.symbol, str(id), AsOfInput.resolve(as_of), repos=context.readable_names()
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
        views = await context.run(
            reader,
            AsOfInput.resolve(as_of),
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
        return await _walk(info, "callers", str(symbol), depth, first, as_of)

    @strawberry.field(description="What the symbol calls, up to `depth` hops (max 5).")
    async def callees(
        self,
        info: Info,
        symbol: strawberry.ID,
        depth: int = 1,
        first: int = 10,
        as_of: AsOfInput | None = None,
    ) -> list[CallEdge]:
        return await _walk(info, "callees", str(symbol), depth, first, as_of)

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
        if not context.principal.can_read(repo_of_key(str(symbol))):
            return Impact(callers=[], entrypoints=[], tests=[])
        view = await context.run(
            context.code.impact,
            str(symbol),
            AsOfInput.resolve(as_of),
            first=first,
            repos=context.readable_names(),
            include_guesses=include_guesses,
        )
        return Impact(
            callers=[CallEdge.from_domain(h) for h in view.callers],
            entrypoints=[CallEdge.from_domain(h) for h in view.entrypoints],
            tests=[CallEdge.from_domain(h) for h in view.tests],
            unresolved=UnresolvedCalls.from_domain(view.unresolved),
        )

    @strawberry.field(description="Every version of an entity's state, with its four times.")
    async def history(
        self, info: Info, id: strawberry.ID, kind: EntityKind = EntityKind.SYMBOL
    ) -> list[FactVersion]:
        context = info.context
        if not context.principal.can_read(repo_of_key(str(id))):
            return []
        versions = await context.run(
            context.graph.state_history, kind.value, str(id), limit=MAX_CHANGES
        )
        return [FactVersion.from_domain(v) for v in versions]

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
        if not context.principal.can_read(repository):
            return []
        # Reads.changes takes no timeout yet; the router's budget still ends the request.
        found = await asyncio.to_thread(
            context.graph.changes, repository, start, end, axis=axis.value, limit=first
        )
        return [Change.from_domain(c) for c in found]

    @strawberry.field(description="A repository and its indexed refs, as of a moment.")
    async def repository(
        self, info: Info, name: str, as_of: AsOfInput | None = None
    ) -> Repository | None:
        context = info.context
        if not context.principal.can_read(name):
            return None
        views = await context.run(context.code.branches, name, AsOfInput.resolve(as_of))
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
        if not context.principal.can_read(repository):
            return None
        key = context.ontology.node("File").make_key({"repo": repository, "ref": ref, "path": path})
        found = await context.run(
            context.code.file, key, AsOfInput.resolve(as_of), repos=context.readable_names()
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
) -> list[CallEdge]:
    context = info.context
    depth = bounded("depth", depth, 1, MAX_DEPTH)
    first = context.page(first)
    if not context.principal.can_read(repo_of_key(key)):
        return []
    reads = context.code
    resolved = AsOfInput.resolve(as_of)
    if direction == "callers":
        # The list type has no room for the unresolved count yet: skip its query.
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
    return [CallEdge.from_domain(h) for h in hits]

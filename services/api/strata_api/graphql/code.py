"""Code-layer queries: symbols, callers and callees, impact, history and changes.

Every field takes an optional ``asOf`` (default: now, now), reads through the
core's as-of queries in a worker thread (the driver is blocking), and filters
by the caller's readable repositories: a symbol of a repository the key cannot
read simply does not exist for it.
"""

from __future__ import annotations

import asyncio
import base64
import functools
from datetime import datetime
from enum import Enum
from typing import Any

import strawberry
from strawberry.types import Info

from strata.code.reads import MAX_DEPTH, MAX_FIRST, CodeReads
from strata.errors import ValidationError
from strata.graph.reads import Reads
from strata.search.lookup import fuzzy_symbols
from strata.security import Principal
from strata_api.graphql.types.asof import AsOfInput
from strata_api.graphql.types.call import CallEdge, Impact
from strata_api.graphql.types.history import Axis, Change, FactVersion
from strata_api.graphql.types.symbol import Symbol

MAX_CHANGES = 500


@strawberry.enum(description="Entity kinds whose history can be read.")
class EntityKind(Enum):
    SYMBOL = "Symbol"
    FILE = "File"
    PACKAGE = "Package"
    BRANCH = "Branch"
    COMMIT = "Commit"
    REPOSITORY = "Repository"
    REQUIREMENT = "Requirement"
    DECISION = "Decision"
    DOCUMENT = "Document"


@strawberry.input(description="Filter for symbols: a name (or qualified name) or a path prefix.")
class SymbolFilter:
    name: str | None = None
    qualified_name: str | None = None
    repository: str | None = None
    ref: str | None = None
    path: str | None = None
    kind: str | None = None
    name_contains: str | None = None  # case-insensitive (strata.search.lookup)
    qualified_name_suffix: str | None = None


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class SymbolEdge:
    cursor: str
    node: Symbol


@strawberry.type(description="A page of symbols (Relay-style).")
class SymbolConnection:
    edges: list[SymbolEdge]
    page_info: PageInfo


@strawberry.type(description="An indexed ref of a repository and the commit it is at.")
class Branch:
    ref: str
    head: str
    committed_at: datetime | None
    files: int | None
    symbols: int | None
    valid_at: datetime


@strawberry.type(description="A registered, indexed repository.")
class Repository:
    name: str
    branches: list[Branch]


@strawberry.type(description="A source file as of some moment.")
class File:
    id: strawberry.ID
    repository: str
    ref: str
    path: str
    language: str | None
    lines: int | None
    module: str | None
    parse_errors: bool
    is_test: bool
    frameworks: list[str]
    commit: str | None
    valid_at: datetime


def _principal(info: Info[Any, Any]) -> Principal:
    principal = getattr(info.context, "principal", None)
    return principal if isinstance(principal, Principal) else Principal.nobody()


def _repos(info: Info[Any, Any]) -> list[str] | None:
    """The readable repositories as a query parameter (None: every repository)."""
    readable = _principal(info).readable_repos()
    return None if readable.all else sorted(readable.names)


def _repo_of_key(key: str) -> str:
    return key.split("|", 1)[0].replace("%7C", "|").replace("%25", "%")


def _timeout(info: Info[Any, Any]) -> float:
    """The request's remaining budget, passed to Neo4j as the transaction timeout."""
    return float(info.context.remaining())


def _code(info: Info[Any, Any]) -> CodeReads:
    return CodeReads(info.context.gateway, info.context.ontology)


def _fuzzy(info: Info[Any, Any], f: SymbolFilter) -> Any:
    return functools.partial(
        fuzzy_symbols,
        info.context.gateway,
        name_contains=f.name_contains,
        qualified_name_suffix=f.qualified_name_suffix,
    )


def _page(info: Info[Any, Any], first: int) -> int:
    """A page size within 1 and the configured cap."""
    cap = min(MAX_FIRST, int(info.context.settings.graphql_max_page_size))
    return _bounded("first", first, 1, cap)


def _bounded(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ValidationError(f"`{name}` must be between {low} and {high}, got {value}")
    return value


def _cursor(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode()


def _after(cursor: str | None) -> str:
    if not cursor:
        return ""
    try:
        return base64.urlsafe_b64decode(cursor.encode()).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationError("`after` is not a cursor returned by this API") from exc


@strawberry.type
class CodeQuery:
    @strawberry.field(description="A symbol by id (its stable key) as of a moment.")
    async def symbol(
        self, info: Info[Any, Any], id: strawberry.ID, as_of: AsOfInput | None = None
    ) -> Symbol | None:
        if not _principal(info).can_read(_repo_of_key(str(id))):
            return None
        as_of_pair = AsOfInput.resolve(as_of)
        view = await asyncio.to_thread(
            _code(info).symbol, str(id), as_of_pair, repos=_repos(info), timeout=_timeout(info)
        )
        return Symbol.from_domain(view) if view else None

    @strawberry.field(description="Symbols by name, qualified name or path prefix (paged).")
    async def symbols(
        self,
        info: Info[Any, Any],
        filter: SymbolFilter,
        first: int = 20,
        after: str | None = None,
        as_of: AsOfInput | None = None,
    ) -> SymbolConnection:
        first = _page(info, first)
        fuzzy = filter.name_contains is not None or filter.qualified_name_suffix is not None
        if not (
            fuzzy or filter.name or filter.qualified_name or (filter.path and filter.repository)
        ):
            raise ValidationError(
                "give filter.name, filter.qualifiedName, or filter.path with filter.repository"
            )
        views = await asyncio.to_thread(
            _fuzzy(info, filter) if fuzzy else _code(info).find_symbols,
            AsOfInput.resolve(as_of),
            name=filter.name,
            qualified_name=filter.qualified_name,
            repo=filter.repository,
            ref=filter.ref,
            path=filter.path,
            kind=filter.kind,
            first=first + 1,
            after=_after(after),
            repos=_repos(info),
            timeout=_timeout(info),
        )
        page = views[:first]
        edges = [SymbolEdge(cursor=_cursor(v.key), node=Symbol.from_domain(v)) for v in page]
        return SymbolConnection(
            edges=edges,
            page_info=PageInfo(
                has_next_page=len(views) > first,
                end_cursor=edges[-1].cursor if edges else None,
            ),
        )

    @strawberry.field(description="Who calls the symbol, up to `depth` hops (max 5).")
    async def callers(
        self,
        info: Info[Any, Any],
        symbol: strawberry.ID,
        depth: int = 1,
        first: int = 10,
        as_of: AsOfInput | None = None,
    ) -> list[CallEdge]:
        return await _walk(info, "callers", str(symbol), depth, first, as_of)

    @strawberry.field(description="What the symbol calls, up to `depth` hops (max 5).")
    async def callees(
        self,
        info: Info[Any, Any],
        symbol: strawberry.ID,
        depth: int = 1,
        first: int = 10,
        as_of: AsOfInput | None = None,
    ) -> list[CallEdge]:
        return await _walk(info, "callees", str(symbol), depth, first, as_of)

    @strawberry.field(
        description="Transitive callers up to the entrypoints they reach, and the tests that "
        "exercise the symbol or its callers."
    )
    async def impact(
        self,
        info: Info[Any, Any],
        symbol: strawberry.ID,
        first: int = 50,
        as_of: AsOfInput | None = None,
    ) -> Impact:
        first = _page(info, first)
        if not _principal(info).can_read(_repo_of_key(str(symbol))):
            return Impact(callers=[], entrypoints=[], tests=[])
        callers, entrypoints, tests = await asyncio.to_thread(
            _code(info).impact,
            str(symbol),
            AsOfInput.resolve(as_of),
            first=first,
            repos=_repos(info),
            timeout=_timeout(info),
        )
        return Impact(
            callers=[CallEdge.from_domain(h) for h in callers],
            entrypoints=[CallEdge.from_domain(h) for h in entrypoints],
            tests=[CallEdge.from_domain(h) for h in tests],
        )

    @strawberry.field(description="Every version of an entity's state, with its four times.")
    async def history(
        self, info: Info[Any, Any], id: strawberry.ID, kind: EntityKind = EntityKind.SYMBOL
    ) -> list[FactVersion]:
        if not _principal(info).can_read(_repo_of_key(str(id))):
            return []
        reads = Reads(info.context.gateway, info.context.ontology)
        versions = await asyncio.to_thread(
            reads.state_history, kind.value, str(id), limit=MAX_CHANGES, timeout=_timeout(info)
        )
        return [FactVersion.from_domain(v) for v in versions]

    @strawberry.field(description="Facts opened and closed in a repository between two instants.")
    async def changes(
        self,
        info: Info[Any, Any],
        repository: str,
        start: datetime,
        end: datetime,
        axis: Axis = Axis.VALID,
        first: int = 100,
    ) -> list[Change]:
        first = _page(info, first)
        if not _principal(info).can_read(repository):
            return []
        reads = Reads(info.context.gateway, info.context.ontology)
        found = await asyncio.to_thread(
            reads.changes, repository, start, end, axis=axis.value, limit=first
        )
        return [Change.from_domain(c) for c in found]

    @strawberry.field(description="A repository and its indexed refs, as of a moment.")
    async def repository(
        self, info: Info[Any, Any], name: str, as_of: AsOfInput | None = None
    ) -> Repository | None:
        if not _principal(info).can_read(name):
            return None
        views = await asyncio.to_thread(
            _code(info).branches, name, AsOfInput.resolve(as_of), timeout=_timeout(info)
        )
        if not views:
            return None
        return Repository(
            name=name,
            branches=[
                Branch(
                    ref=b.ref,
                    head=b.head,
                    committed_at=b.committed_at,
                    files=b.files,
                    symbols=b.symbols,
                    valid_at=b.valid_at,
                )
                for b in views
            ],
        )

    @strawberry.field(description="A file of a repository at a ref, as of a moment.")
    async def file(
        self,
        info: Info[Any, Any],
        repository: str,
        path: str,
        ref: str = "main",
        as_of: AsOfInput | None = None,
    ) -> File | None:
        if not _principal(info).can_read(repository):
            return None
        key = info.context.ontology.node("File").make_key(
            {"repo": repository, "ref": ref, "path": path}
        )
        found = await asyncio.to_thread(
            _code(info).file,
            key,
            AsOfInput.resolve(as_of),
            repos=_repos(info),
            timeout=_timeout(info),
        )
        if found is None:
            return None
        node, state = found
        return File(
            id=strawberry.ID(key),
            repository=repository,
            ref=ref,
            path=node["path"],
            language=state.get("language"),
            lines=state.get("lines"),
            module=state.get("module"),
            parse_errors=bool(state.get("parse_errors")),
            is_test=bool(state.get("is_test")),
            frameworks=list(state.get("frameworks") or []),
            commit=state.get("source_commit"),
            valid_at=state["valid_at"],
        )


async def _walk(
    info: Info[Any, Any],
    direction: str,
    key: str,
    depth: int,
    first: int,
    as_of: AsOfInput | None,
) -> list[CallEdge]:
    depth = _bounded("depth", depth, 1, MAX_DEPTH)
    first = _page(info, first)
    if not _principal(info).can_read(_repo_of_key(key)):
        return []
    reads = _code(info)
    walk = reads.callers if direction == "callers" else reads.callees
    hits = await asyncio.to_thread(
        walk,
        key,
        AsOfInput.resolve(as_of),
        depth=depth,
        first=first,
        repos=_repos(info),
        timeout=_timeout(info),
    )
    return [CallEdge.from_domain(h) for h in hits]

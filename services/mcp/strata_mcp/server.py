"""The MCP server: search, symbol, callers, callees, impact, history, changes,
requirement, tests_for and context.

Each tool reads through the core (``strata.search``, ``strata.code.reads``,
``strata.graph.reads``) in a worker thread, takes an optional ``as_of``
(``valid_at``, ``known_at``), checks the caller's key exactly as the GraphQL
API does, and returns a typed, cited answer. A :class:`strata.errors.StrataError`
becomes a tool error whose text starts with its code (``NOT_FOUND: ...``), in the
same client view the API gives it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from strata.code.changes import CodeChanges
from strata.code.reads import MAX_DEPTH, MAX_FIRST, CodeReads
from strata.errors import NotFound, StrataError
from strata.graph.absence import BeforeHistory, cut_lists
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.ontology.model import Ontology
from strata.search.service import SearchService
from strata.security import Principal
from strata.settings import Settings
from strata.temporal import AsOf
from strata_mcp.absence import Absence
from strata_mcp.absence import tool_error as _tool_error
from strata_mcp.access import Access
from strata_mcp.card_tools import register_card_tools
from strata_mcp.context_models import CodeChangesOut
from strata_mcp.context_tools import register_context_tools
from strata_mcp.models import (
    AsOfArg,
    AsOfParam,
    Call,
    CallsOut,
    ChangeOut,
    ChangesOut,
    HistoryOut,
    ImpactOut,
    Repository,
    SearchOut,
    SymbolOut,
    UnresolvedOut,
    UnresolvedSiteOut,
    Version,
)
from strata_mcp.trace_tools import register_trace_tools

T = TypeVar("T")

INSTRUCTIONS = """\
Strata is a bitemporal memory of a codebase. Start with `search` (words, an identifier,
or a question) to get entity ids, then `symbol`, `callers`, `callees`, `impact` and
`history` on an id. Every answer cites path, lines and commit. Pass `as_of`
({valid_at, known_at}, ISO 8601 with a zone) to ask what was true, or what Strata
believed, at another moment."""

SymbolId = Annotated[
    str, Field(min_length=3, max_length=2000, description="A symbol id from `search`")
]


@dataclass(frozen=True, slots=True)
class Core:
    """What the tools read through; one per process."""

    settings: Settings
    gateway: Gateway
    ontology: Ontology
    search: SearchService


def _repos(principal: Principal) -> list[str] | None:
    readable = principal.readable_repos()
    return None if readable.all else sorted(readable.names)


def build_server(core: Core, access: Access) -> MCPServer:  # noqa: PLR0915 - a closure per tool
    """The MCP server with every tool registered."""
    mcp: MCPServer = MCPServer(name="strata", instructions=INSTRUCTIONS)
    code = CodeReads(core.gateway, core.ontology)
    reads = Reads(core.gateway, core.ontology)
    timeout = core.settings.request_timeout_s
    expose = core.settings.is_development

    async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
        except StrataError as exc:
            raise _tool_error(exc, expose) from None

    absence = Absence(core.gateway, core.ontology, run, timeout, expose)

    async def who(ctx: Context) -> Principal:
        try:
            return await access.principal(ctx.headers)
        except StrataError as exc:
            raise _tool_error(exc, expose) from None

    async def readable_symbol(ctx: Context, key: str, as_of: AsOfArg | None) -> Principal:
        """The caller, once the symbol exists as of the moment and the key may read it."""
        principal = await who(ctx)
        repo, label = absence.key(key)
        pair = AsOfArg.resolve(as_of)
        view = None
        readable = principal.can_read(repo)
        if readable:
            view = await run(code.symbol, key, pair, repos=_repos(principal), timeout=timeout)
        if view is None:
            why = await absence.reason(repo, pair, label=label, key=key, readable=readable)
            if isinstance(why, BeforeHistory):
                raise _tool_error(why, expose)
            because = f": {why.message}" if why is not None else ""
            raise _tool_error(
                NotFound(
                    f"no symbol {key!r} as of {pair.valid_at.isoformat()}{because}",
                    hint="take ids from `search` (they look like repo|ref|path|qualname)",
                ),
                expose,
            )
        return principal

    @mcp.tool(
        description=(
            "Hybrid search (full text, vectors, call-graph proximity, fused by reciprocal "
            "rank) over one repository. Each hit has an id for the other tools, says which "
            "retrievers matched it, and cites path, lines and commit."
        )
    )
    async def search(  # noqa: PLR0917 - the parameters are the tool's input schema
        query: Annotated[str, Field(description="Words, an identifier, or a question")],
        repository: Repository,
        ctx: Context,
        layers: Annotated[
            list[Literal["code", "knowledge"]] | None, Field(description="Default: all")
        ] = None,
        kinds: Annotated[
            list[str] | None, Field(description="e.g. function, method, class, file, requirement")
        ] = None,
        first: Annotated[int, Field(ge=1, le=50)] = 10,
        as_of: AsOfParam = None,
    ) -> SearchOut:
        principal = await who(ctx)
        result = await run(
            core.search.search,
            query,
            repository,
            layers=layers,
            kinds=kinds,
            first=first,
            as_of=AsOfArg.resolve(as_of),
            repos=_repos(principal),
            timeout=timeout,
        )
        if not result.hits:  # an unknown repository was refused above: is it the moment?
            await absence.refuse_before_history(repository, AsOfArg.resolve(as_of))
        return SearchOut.of(result, first)

    @mcp.tool(description="A symbol by id as of a moment: kind, signature, docstring, evidence.")
    async def symbol(id: SymbolId, ctx: Context, as_of: AsOfParam = None) -> SymbolOut:
        principal = await who(ctx)
        repo, _ = absence.key(id, "Symbol")
        pair = AsOfArg.resolve(as_of)
        readable = principal.can_read(repo)
        view = None
        if readable:
            view = await run(code.symbol, id, pair, repos=_repos(principal), timeout=timeout)
        if view is None:
            why = await absence.reason(repo, pair, key=id, readable=readable)
            return SymbolOut.of(id, None, why or NotFound(f"no symbol {id!r} as of then"))
        return SymbolOut.of(id, view)

    async def walk(
        step: Callable[..., Any],
        id: str,
        ctx: Context,
        *,
        depth: int,
        first: int,
        as_of: Any,
        **options: Any,
    ) -> CallsOut:
        principal = await readable_symbol(ctx, id, as_of)
        hits = await run(
            step,
            id,
            AsOfArg.resolve(as_of),
            depth=depth,
            first=first + 1,
            repos=_repos(principal),
            timeout=timeout,
            **options,
        )
        return CallsOut(
            id=id, calls=[Call.of(h) for h in hits[:first]], truncated=len(hits) > first
        )

    @mcp.tool(description="Who calls the symbol, breadth first up to `depth` hops (max 5).")
    async def callers(
        id: SymbolId,
        ctx: Context,
        depth: Annotated[int, Field(ge=1, le=MAX_DEPTH)] = 1,
        first: Annotated[int, Field(ge=1, le=100)] = 10,
        as_of: AsOfParam = None,
    ) -> CallsOut:
        # CallsOut has no room for the unresolved count: skip its repository-wide query.
        return await walk(
            code.callers, id, ctx, depth=depth, first=first, as_of=as_of, unresolved=False
        )

    @mcp.tool(description="What the symbol calls, breadth first up to `depth` hops (max 5).")
    async def callees(
        id: SymbolId,
        ctx: Context,
        depth: Annotated[int, Field(ge=1, le=MAX_DEPTH)] = 1,
        first: Annotated[int, Field(ge=1, le=100)] = 10,
        as_of: AsOfParam = None,
    ) -> CallsOut:
        return await walk(code.callees, id, ctx, depth=depth, first=first, as_of=as_of)

    @mcp.tool(
        description="Transitive callers of the symbol, the entrypoints and tests among them; "
        "calls linked by name alone are left out unless include_guesses."
    )
    async def impact(
        id: SymbolId,
        ctx: Context,
        first: Annotated[int, Field(ge=1, le=100)] = 20,
        as_of: AsOfParam = None,
        include_guesses: Annotated[
            bool, Field(description="also follow calls linked by name alone (name_only)")
        ] = False,
    ) -> ImpactOut:
        principal = await readable_symbol(ctx, id, as_of)
        view = await run(
            code.impact,
            id,
            AsOfArg.resolve(as_of),
            first=first + 1,  # one more than shown: each list knows whether it was cut
            repos=_repos(principal),
            timeout=timeout,
            include_guesses=include_guesses,
        )
        unseen = view.unresolved
        lists = {"callers": view.callers, "entrypoints": view.entrypoints, "tests": view.tests}
        cut = cut_lists(lists, first, total=view.total, cap=MAX_FIRST)
        return ImpactOut(
            id=id,
            callers=[Call.of(h) for h in view.callers[:first]],
            entrypoints=[Call.of(h) for h in view.entrypoints[:first]],
            tests=[Call.of(h) for h in view.tests[:first]],
            total_callers=view.total,
            truncated=bool(cut),
            truncated_lists=cut,
            unresolved=UnresolvedOut(
                count=unseen.count,
                by_name=dict(unseen.by_name),
                sample=[
                    UnresolvedSiteOut(path=s.path, caller=s.caller, callee=s.callee, line=s.line)
                    for s in unseen.sample
                ],
            ),
        )

    @mcp.tool(description="Every version of an entity's state, with its four times and commit.")
    async def history(
        id: SymbolId,
        ctx: Context,
        kind: Literal["Symbol", "File", "Requirement", "Decision"] = "Symbol",
        first: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> HistoryOut:
        principal = await who(ctx)
        repo, _ = absence.key(id, kind)
        readable = principal.can_read(repo)
        versions = []
        if readable:
            if kind == "Symbol":  # its versions' spans, from the File layouts (ontology v4)
                versions = await run(code.history, id, limit=first, timeout=timeout)
            else:
                versions = await run(reads.state_history, kind, id, limit=first, timeout=timeout)
        if not versions:
            await absence.refuse(repo, label=kind, key=id, readable=readable)
        return HistoryOut(id=id, versions=[Version.of(v) for v in versions])

    @mcp.tool(
        description=(
            "Facts opened and closed in a repository between two instants. With "
            "`readable`, symbol changes instead: added / removed / modified / moved / renamed, "
            "grouped by commit, filtered by `path` prefix, `kind` and `change`, paged by `after`."
        )
    )
    async def changes(  # noqa: PLR0917 - the parameters are the tool's input schema
        repository: Repository,
        start: datetime,
        end: datetime,
        ctx: Context,
        axis: Literal["valid", "known"] = "valid",
        first: Annotated[int, Field(ge=1, le=500)] = 100,
        readable: bool = False,
        path: str | None = None,
        kind: str | None = None,
        change: Literal["added", "removed", "modified", "moved", "renamed"] | None = None,
        after: str | None = None,
    ) -> ChangesOut:
        principal = await who(ctx)
        if not principal.can_read(repository):
            raise _tool_error(
                NotFound(f"repository {repository!r} is not readable with this key"), expose
            )
        if readable:
            page = await run(
                CodeChanges(core.gateway).page, repository, start, end, path=path, kind=kind,
                change=change, first=min(first, 200), after=after, timeout=timeout,
            )  # fmt: skip
            return ChangesOut(repository=repository, changes=[], code=CodeChangesOut.of(page))
        found = await run(reads.changes, repository, start, end, axis=axis, limit=first)
        if not found:
            moment = AsOf.at(valid_at=end) if axis == "valid" else AsOf.at(known_at=end)
            await absence.refuse(repository, moment)
        return ChangesOut(repository=repository, changes=[ChangeOut.of(c) for c in found])

    register_trace_tools(mcp, core, who, run, absence)
    register_context_tools(mcp, core, who, run, absence.refuse_before_history)
    register_card_tools(mcp, core, who, run)
    return mcp


def open_core(settings: Settings) -> Core:
    """Connect to Neo4j and load the ontology and the embedder (the caller closes the gateway)."""
    from strata.ontology import load_ontology
    from strata.search.docs import SearchIndex, embedder_for

    gateway = Gateway.connect(settings)
    search = SearchService(gateway, SearchIndex(gateway, embedder_for(settings)))
    return Core(settings, gateway, load_ontology(settings.ontology_dir), search)


def authenticator_for(core: Core) -> Any:
    """The API's authenticator over the same graph (API keys in Neo4j, optional JWT)."""
    from strata.registry import KeyRing
    from strata.security import ServerKeys
    from strata_api.auth import Authenticator

    keys = ServerKeys(core.settings.secret_key.get_secret_value())
    return Authenticator(core.settings, KeyRing(core.gateway, keys), keys)


def serve(
    settings: Settings,
    *,
    transport: Literal["stdio", "http"],
    host: str = "127.0.0.1",
    port: int = 8765,
    env_key: str | None = None,
) -> None:
    """Run the server until the client (stdio) or a signal (HTTP) ends it."""
    import anyio
    import uvicorn

    from strata_mcp.access import BearerGate

    core = open_core(settings)
    try:
        authenticator = authenticator_for(core)
        if transport == "stdio":
            server = build_server(core, Access(authenticator, env_key=env_key))
            anyio.run(server.run_stdio_async)
            return
        server = build_server(core, Access(authenticator, env_key=None))
        app = server.streamable_http_app(stateless_http=True, json_response=True, host=host)
        config = uvicorn.Config(
            BearerGate(app, authenticator), host=host, port=port, log_level="warning"
        )
        uvicorn.Server(config).run()
    finally:
        core.gateway.close()

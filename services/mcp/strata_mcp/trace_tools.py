"""The `requirement` and `tests_for` tools: the trace layer's reads, on the same key checks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer

from strata.errors import NotFound
from strata.security import Principal
from strata.trace.reads import TraceReads
from strata_mcp.absence import Absence
from strata_mcp.models import AsOfArg, AsOfParam, Link, LinksOut, Repository, RequirementOut

if TYPE_CHECKING:
    from strata_mcp.server import Core


def register_trace_tools(
    mcp: MCPServer,
    core: Core,
    who: Callable[[Context], Awaitable[Principal]],
    run: Callable[..., Awaitable[Any]],
    absence: Absence,
) -> None:
    """requirement and tests_for: the trace layer's reads, on the same checks."""
    timeout = core.settings.request_timeout_s
    trace = TraceReads(core.gateway)
    req_key = core.ontology.node("Requirement").make_key

    @mcp.tool(description="A requirement (REQ-###) as of a moment: text, EARS pattern, evidence.")
    async def requirement(
        id: str, repository: Repository, ctx: Context, as_of: AsOfParam = None
    ) -> RequirementOut:
        principal = await who(ctx)
        key = req_key({"repo": repository, "req_id": id})
        pair = AsOfArg.resolve(as_of)
        readable = principal.can_read(repository)
        found = await run(trace.requirement, key, pair, timeout=timeout) if readable else None
        if found is None:
            why = await absence.reason(
                repository, pair, label="Requirement", key=key, readable=readable
            )
            missing = NotFound(f"no requirement {id!r} in {repository!r} as of then")
            return RequirementOut.of(id, None, why or missing)
        return RequirementOut.of(id, found)

    @mcp.tool(description="The tests linked to a requirement (VERIFIED_BY), with status.")
    async def tests_for(
        requirement: str, repository: Repository, ctx: Context, as_of: AsOfParam = None
    ) -> LinksOut:
        principal = await who(ctx)
        key = req_key({"repo": repository, "req_id": requirement})
        pair = AsOfArg.resolve(as_of)
        readable = principal.can_read(repository)
        links = []
        if readable:
            links = await run(trace.links_from, key, pair, types=["VERIFIED_BY"], timeout=timeout)
        if not links:
            await absence.refuse(repository, pair, label="Requirement", key=key, readable=readable)
        return LinksOut(requirement=requirement, links=[Link.of(v) for v in links])

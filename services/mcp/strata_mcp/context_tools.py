"""The `context` tool: a task's context pack, on the same key checks as every tool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from strata.context.builder import ContextBuilder
from strata.context.check import MAX_BUDGET, MAX_TASK_CHARS, MIN_BUDGET
from strata.context.sources import git_blobs
from strata.locations import repository_git
from strata.security import Principal
from strata.temporal import AsOf
from strata_mcp.context_models import ContextOut
from strata_mcp.models import AsOfArg

if TYPE_CHECKING:
    from strata_mcp.server import Core


def register_context_tools(
    mcp: MCPServer,
    core: Core,
    who: Callable[[Context], Awaitable[Principal]],
    run: Callable[..., Awaitable[Any]],
    refuse_before_history: Callable[[str, AsOf], Awaitable[None]],
) -> None:
    """Register `context` on ``mcp``."""
    timeout = core.settings.request_timeout_s
    locate = repository_git(core.gateway, core.settings.mirrors_dir)
    builder = ContextBuilder(core.gateway, core.ontology, core.search, git_blobs(locate))

    @mcp.tool(
        description=(
            "A context pack for a coding task: the task is routed to an intent (explain, "
            "find tests, find entrypoints, trace a flow, impact, requirement, what changed), "
            "its target resolved, evidence gathered and gated (`sufficient`, `reasons`), and "
            "cut to `budget_tokens`. Every line cites path:line@commit; `markdown` is ready "
            "for a prompt."
        )
    )
    async def context(
        task: Annotated[str, Field(min_length=1, max_length=MAX_TASK_CHARS)],
        repository: Annotated[str, Field(min_length=1, max_length=200)],
        ctx: Context,
        budget_tokens: Annotated[int, Field(ge=MIN_BUDGET, le=MAX_BUDGET)] = 500,
        as_of: AsOfArg | None = None,
    ) -> ContextOut:
        principal = await who(ctx)
        readable = principal.readable_repos()
        pack = await run(
            builder.build,
            task,
            repository,
            budget_tokens=budget_tokens,
            as_of=AsOfArg.resolve(as_of),
            repos=None if readable.all else sorted(readable.names),
            timeout=timeout,
        )
        if not pack.sufficient:  # say so when it is because the moment is outside the history
            await refuse_before_history(repository, AsOfArg.resolve(as_of))
        return ContextOut.of(pack)

"""The ``context`` query: a task's context pack over one repository, as of a moment."""

from __future__ import annotations

import strawberry

from strata.context.pack import Pack
from strata.temporal import AsOf
from strata_api.graphql.absence import say_why
from strata_api.graphql.context import Info
from strata_api.graphql.types.asof import AsOfInput
from strata_api.graphql.types.context_pack import ContextPack


@strawberry.type
class ContextQuery:
    @strawberry.field(
        description=(
            "A context pack for a task: the task routed to an intent, its target resolved, "
            "evidence gathered and gated, cut to budgetTokens (50..20000, cl100k_base), "
            "every line cited path:line@commit."
        )
    )
    async def context(
        self,
        info: Info,
        task: str,
        repository: str,
        budget_tokens: int = 500,
        as_of: AsOfInput | None = None,
    ) -> ContextPack:
        ctx = info.context
        pair: AsOf = AsOfInput.resolve(as_of)
        # Off the API process: cheap reads never wait behind a pack (strata_api.heavy).
        pack: Pack = await ctx.heavy_reads.context(
            ctx.remaining(),
            task=task,
            repository=repository,
            budget_tokens=budget_tokens,
            as_of=pair,
            repos=ctx.readable_names(),
        )
        if not pack.sufficient:  # say so when it is because the moment is outside the history
            await say_why(info, repository, pair)
        return ContextPack.from_domain(pack)

"""The ``codeChanges`` query: symbol changes classified, grouped by commit, with a cursor."""

from __future__ import annotations

from datetime import datetime

import strawberry

from strata.code.changes import CodeChanges
from strata.temporal import AsOf
from strata_api.graphql.absence import say_why
from strata_api.graphql.context import Info
from strata_api.graphql.types.code_changes import CodeChangesPage


@strawberry.type
class CodeChangesQuery:
    @strawberry.field(
        description=(
            "Symbols added, removed, modified, moved or renamed in [start, end), by commit; "
            "filter by path prefix, symbol kind and change kind; page with first/after."
        )
    )
    async def code_changes(
        self,
        info: Info,
        repository: str,
        start: datetime,
        end: datetime,
        path: str | None = None,
        kind: str | None = None,
        change: str | None = None,
        ref: str | None = None,
        first: int = 50,
        after: str | None = None,
    ) -> CodeChangesPage:
        ctx = info.context
        first = ctx.page(first)
        if not ctx.principal.can_read(repository):
            await say_why(info, repository, readable=False)
            return CodeChangesPage.empty()
        page = await ctx.run(
            CodeChanges(ctx.gateway).page,
            repository,
            start,
            end,
            ref=ref,
            path=path,
            kind=kind,
            change=change,
            first=first,
            after=after,
        )
        result = CodeChangesPage.from_domain(page)
        if not result.commits and not after:
            await say_why(info, repository, AsOf.at(valid_at=end))
        return result

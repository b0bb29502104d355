"""The ``findings`` query: what the knowledge and trace syncs refused, dropped or linted."""

from __future__ import annotations

import strawberry

from strata.trace.reads import findings
from strata_api.graphql.context import Info
from strata_api.graphql.types.asof import AsOfInput
from strata_api.graphql.types.finding import Finding


@strawberry.type
class FindingQuery:
    @strawberry.field(
        description="Findings of a repository's files as of a moment (refused trace files, "
        "malformed or duplicate requirements, lint); filter by kind (the rule), layer "
        "(knowledge | trace) or severity (error | warning)."
    )
    async def findings(
        self,
        info: Info,
        repository: str,
        kind: str | None = None,
        layer: str | None = None,
        severity: str | None = None,
        first: int = 50,
        as_of: AsOfInput | None = None,
    ) -> list[Finding]:
        context = info.context
        first = context.page(first)
        if not context.principal.can_read(repository):
            return []
        found = await context.run(
            findings,
            context.gateway,
            repository,
            AsOfInput.resolve(as_of),
            layer=layer,
            rule=kind,
            severity=severity,
            first=first,
        )
        return [Finding.from_domain(f) for f in found]

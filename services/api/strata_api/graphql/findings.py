"""The ``findings`` query: what the knowledge and trace syncs refused, dropped or linted."""

from __future__ import annotations

import asyncio
from typing import Any

import strawberry
from strawberry.types import Info

from strata.trace.reads import findings
from strata_api.graphql.code import _page, _principal, _timeout
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
        info: Info[Any, Any],
        repository: str,
        kind: str | None = None,
        layer: str | None = None,
        severity: str | None = None,
        first: int = 50,
        as_of: AsOfInput | None = None,
    ) -> list[Finding]:
        first = _page(info, first)
        if not _principal(info).can_read(repository):
            return []
        found = await asyncio.to_thread(
            findings,
            info.context.gateway,
            repository,
            AsOfInput.resolve(as_of),
            layer=layer,
            rule=kind,
            severity=severity,
            first=first,
            timeout=_timeout(info),
        )
        return [Finding.from_domain(f) for f in found]

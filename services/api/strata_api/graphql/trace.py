"""Knowledge and trace queries: requirements, decisions, links and the trace report."""

from __future__ import annotations

import strawberry

from strata.errors import ValidationError
from strata.trace.files import ADR as ADR_ID
from strata_api.graphql.arguments import repo_of_key
from strata_api.graphql.context import Context, Info
from strata_api.graphql.types.asof import AsOfInput
from strata_api.graphql.types.trace import (
    Decision,
    Requirement,
    StatusCount,
    TraceLink,
    TraceReport,
)


def _requirement_key(context: Context, repository: str, req_id: str) -> str:
    if not req_id.startswith("REQ-"):
        raise ValidationError(
            f"requirement ids look like REQ-001 (decision ids like ADR-0001), got {req_id!r}"
        )
    return context.ontology.node("Requirement").make_key({"repo": repository, "req_id": req_id})


def _decision_key(context: Context, repository: str, decision_id: str) -> str:
    return context.ontology.node("Decision").make_key(
        {"repo": repository, "decision_id": decision_id}
    )


async def _requirement_links(
    info: Info,
    repository: str,
    requirement: str,
    as_of: AsOfInput | None,
    types: list[str] | None,
) -> list[TraceLink]:
    context = info.context
    if not context.principal.can_read(repository):
        return []
    links = await context.run(
        context.trace.links_from,
        _requirement_key(context, repository, requirement),
        AsOfInput.resolve(as_of),
        types=types,
    )
    return [TraceLink.from_domain(v) for v in links]


@strawberry.type
class TraceQuery:
    @strawberry.field(description="One requirement, as of a moment.")
    async def requirement(
        self, info: Info, repository: str, id: str, as_of: AsOfInput | None = None
    ) -> Requirement | None:
        context = info.context
        if not context.principal.can_read(repository):
            return None
        found = await context.run(
            context.trace.requirement,
            _requirement_key(context, repository, id),
            AsOfInput.resolve(as_of),
        )
        return Requirement.from_domain(found) if found else None

    @strawberry.field(description="Requirements of a repository (optionally one EARS pattern).")
    async def requirements(
        self,
        info: Info,
        repository: str,
        ears: str | None = None,
        first: int = 50,
        after: str | None = None,
        as_of: AsOfInput | None = None,
    ) -> list[Requirement]:
        context = info.context
        first = context.page(first)
        if not context.principal.can_read(repository):
            return []
        found = await context.run(
            context.trace.requirements,
            repository,
            AsOfInput.resolve(as_of),
            ears=ears,
            first=first,
            after=after or "",
        )
        return [Requirement.from_domain(r) for r in found]

    @strawberry.field(description="Requirement links into a symbol (what it implements or tests).")
    async def requirements_for(
        self, info: Info, symbol: strawberry.ID, as_of: AsOfInput | None = None
    ) -> list[TraceLink]:
        context = info.context
        if not context.principal.can_read(repo_of_key(str(symbol))):
            return []
        links = await context.run(
            context.trace.links_into,
            str(symbol),
            AsOfInput.resolve(as_of),
            types=["IMPLEMENTED_BY", "AFFECTS", "VERIFIED_BY"],
        )
        return [TraceLink.from_domain(v) for v in links]

    @strawberry.field(
        description="Every link of a requirement (implementations, tests, the decisions that "
        "constrain it) or of a decision (ADR-0001: the requirements it constrains)."
    )
    async def links_for(
        self,
        info: Info,
        repository: str,
        requirement: str,
        as_of: AsOfInput | None = None,
    ) -> list[TraceLink]:
        context = info.context
        if not context.principal.can_read(repository):
            return []
        when = AsOfInput.resolve(as_of)
        if ADR_ID.match(requirement):
            key = _decision_key(context, repository, requirement)
            views = await context.run(context.trace.links_from, key, when)
        else:
            key = _requirement_key(context, repository, requirement)
            views = await context.run(context.trace.links_of_requirement, key, when)
        return [TraceLink.from_domain(v) for v in views]

    @strawberry.field(description="The tests that verify a requirement.")
    async def tests_for(
        self,
        info: Info,
        repository: str,
        requirement: str,
        as_of: AsOfInput | None = None,
    ) -> list[TraceLink]:
        return await _requirement_links(info, repository, requirement, as_of, ["VERIFIED_BY"])

    @strawberry.field(description="Decisions (ADRs) of a repository, as of a moment.")
    async def decisions(
        self,
        info: Info,
        repository: str,
        status: str | None = None,
        first: int = 50,
        as_of: AsOfInput | None = None,
    ) -> list[Decision]:
        context = info.context
        first = context.page(first)
        if not context.principal.can_read(repository):
            return []
        when = AsOfInput.resolve(as_of)
        found = await context.run(
            context.trace.decisions,
            repository,
            when,
            status=status,
            first=first,
        )
        return [Decision.from_domain(d, when) for d in found]

    @strawberry.field(description="Counts by status, stale links with evidence, and gaps.")
    async def trace_report(
        self, info: Info, repository: str, as_of: AsOfInput | None = None
    ) -> TraceReport | None:
        context = info.context
        if not context.principal.can_read(repository):
            return None
        report = await context.run(context.trace.report, repository, AsOfInput.resolve(as_of))
        cap = int(context.settings.graphql_max_page_size)
        return TraceReport(
            repository=repository,
            requirements=report.requirements,
            counts=[
                StatusCount(type=t, status=s, count=c)
                for t, by in report.counts.items()
                for s, c in sorted(by.items())
            ],
            stale=[TraceLink.from_domain(v) for v in report.stale[:cap]],
            unimplemented=report.unimplemented[:cap],
            untested=report.untested[:cap],
            orphaned=[TraceLink.from_domain(v) for v in report.orphaned[:cap]],
            suspect=[TraceLink.from_domain(v) for v in report.suspect[:cap]],
            suspect_count=len(report.suspect),
        )

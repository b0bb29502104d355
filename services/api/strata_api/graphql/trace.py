"""Knowledge and trace queries: requirements, decisions, links and the trace report."""

from __future__ import annotations

import strawberry

from strata.errors import ValidationError
from strata.trace.files import ADR as ADR_ID
from strata_api.graphql.absence import checked_key, read_or_say_why, say_why
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
    key = _requirement_key(context, repository, requirement)
    when = AsOfInput.resolve(as_of)
    links = await read_or_say_why(
        info,
        repository,
        when,
        lambda: context.run(context.trace.links_from, key, when, types=types),
        label="Requirement",
        key=key,
    )
    return [TraceLink.from_domain(v) for v in links or []]


@strawberry.type
class TraceQuery:
    @strawberry.field(description="One requirement, as of a moment.")
    async def requirement(
        self, info: Info, repository: str, id: str, as_of: AsOfInput | None = None
    ) -> Requirement | None:
        context = info.context
        key = _requirement_key(context, repository, id)
        when = AsOfInput.resolve(as_of)
        found = await read_or_say_why(
            info,
            repository,
            when,
            lambda: context.run(context.trace.requirement, key, when),
            label="Requirement",
            key=key,
            one=True,
        )
        if not found:
            return None
        return Requirement.from_domain(found)

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
        when = AsOfInput.resolve(as_of)
        readable = context.principal.can_read(repository)
        found = []
        if readable:
            found = await context.run(
                context.trace.requirements, repository, when, ears=ears, first=first,
                after=after or "",
            )  # fmt: skip
        if not found and not after:
            await say_why(info, repository, when, readable=readable)
        return [Requirement.from_domain(r) for r in found]

    @strawberry.field(description="Requirement links into a symbol (what it implements or tests).")
    async def requirements_for(
        self, info: Info, symbol: strawberry.ID, as_of: AsOfInput | None = None
    ) -> list[TraceLink]:
        context = info.context
        key = str(symbol)
        repo, label = checked_key(info, key)
        when = AsOfInput.resolve(as_of)
        readable = context.principal.can_read(repo)
        links = []
        if readable:
            links = await context.run(
                context.trace.links_into,
                key,
                when,
                types=["IMPLEMENTED_BY", "AFFECTS", "VERIFIED_BY"],
            )
        if not links:
            await say_why(info, repo, when, label=label, key=key, readable=readable)
        return [TraceLink.from_domain(v) for v in links or []]

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
        when = AsOfInput.resolve(as_of)
        decision = bool(ADR_ID.match(requirement))
        if decision:
            label, key = "Decision", _decision_key(context, repository, requirement)
        else:
            label, key = "Requirement", _requirement_key(context, repository, requirement)
        readable = context.principal.can_read(repository)
        views = []
        if readable:
            read = context.trace.links_from if decision else context.trace.links_of_requirement
            views = await context.run(read, key, when)
        if not views:
            await say_why(info, repository, when, label=label, key=key, readable=readable)
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
        when = AsOfInput.resolve(as_of)
        readable = context.principal.can_read(repository)
        found = []
        if readable:
            found = await context.run(
                context.trace.decisions, repository, when, status=status, first=first
            )
        if not found:
            await say_why(info, repository, when, readable=readable)
        return [Decision.from_domain(d, when) for d in found]

    @strawberry.field(description="Counts by status, stale links with evidence, and gaps.")
    async def trace_report(
        self, info: Info, repository: str, as_of: AsOfInput | None = None
    ) -> TraceReport | None:
        context = info.context
        when = AsOfInput.resolve(as_of)
        if not context.principal.can_read(repository):
            await say_why(info, repository, when, readable=False)
            return None
        report = await context.run(context.trace.report, repository, when)
        if not report.requirements:
            await say_why(info, repository, when)
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

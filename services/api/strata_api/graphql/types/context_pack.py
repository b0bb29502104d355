"""A task context pack: cited lines in sections, the gate's verdict, and the markdown."""

from __future__ import annotations

import strawberry

from strata.context.pack import Candidate as CandidateView
from strata.context.pack import Line as LineView
from strata.context.pack import Pack


@strawberry.type(description="One cited line of a pack.")
class ContextLine:
    text: str
    citation: str = strawberry.field(description="path:line@commit (12 hex digits).")
    path: str | None
    line: int | None
    commit: str | None

    @classmethod
    def from_domain(cls, line: LineView) -> ContextLine:
        return cls(
            text=line.text,
            citation=str(line.cite),
            path=line.cite.path,
            line=line.cite.line,
            commit=line.cite.commit,
        )


@strawberry.type(description="A titled group of lines (Target, Callers, Tests, Outline, ...).")
class ContextSection:
    title: str
    lines: list[ContextLine]


@strawberry.type(description="An entity the task may have meant.")
class ContextCandidate:
    id: strawberry.ID
    qualified_name: str
    kind: str
    citation: str

    @classmethod
    def from_domain(cls, c: CandidateView) -> ContextCandidate:
        return cls(
            id=strawberry.ID(c.key),
            qualified_name=c.qualified_name,
            kind=c.kind,
            citation=str(c.cite),
        )


@strawberry.type(description="Evidence for a task, routed, gated and cut to a token budget.")
class ContextPack:
    task: str
    repository: str
    intent: str = strawberry.field(
        description="explain, find_tests, find_entrypoints, trace_flow, impact, requirement "
        "or what_changed."
    )
    target: strawberry.ID | None
    target_name: str | None
    sufficient: bool = strawberry.field(description="False: see reasons and candidates.")
    reasons: list[str]
    budget_tokens: int
    tokens: int = strawberry.field(description="cl100k_base tokens of the markdown.")
    dropped: int = strawberry.field(description="Lines left out to fit the budget.")
    notes: list[str]
    sections: list[ContextSection]
    candidates: list[ContextCandidate]
    markdown: str

    @classmethod
    def from_domain(cls, pack: Pack) -> ContextPack:
        return cls(
            task=pack.task,
            repository=pack.repository,
            intent=pack.intent,
            target=strawberry.ID(pack.target) if pack.target else None,
            target_name=pack.target_name,
            sufficient=pack.sufficient,
            reasons=list(pack.reasons),
            budget_tokens=pack.budget,
            tokens=pack.tokens,
            dropped=pack.dropped,
            notes=list(pack.notes),
            sections=[
                ContextSection(title=title, lines=[ContextLine.from_domain(x) for x in lines])
                for title, lines in pack.sections()
            ],
            candidates=[ContextCandidate.from_domain(c) for c in pack.candidates],
            markdown=pack.markdown(),
        )

"""One hop of a callers/callees traversal."""

from __future__ import annotations

import strawberry

from strata.code.reads import CallHit, Unresolved
from strata_api.graphql.cost import WITHIN_PAGE
from strata_api.graphql.types.evidence import Evidence


@strawberry.type(description="A caller (or callee) reached through a CALLS fact.")
class CallEdge:
    id: strawberry.ID = strawberry.field(description="The caller's (callee's) symbol or file id.")
    kind: str = strawberry.field(description="Symbol kind, or 'file' for a file-level call.")
    qualified_name: str
    path: str
    repository: str
    depth: int
    via: strawberry.ID = strawberry.field(description="The symbol this hop connects to.")
    line: int = strawberry.field(description="Line of the (first) call site.")
    lines: list[int]
    confidence: float
    resolution: str = strawberry.field(
        description="How the call was resolved: local, self, import, hierarchy, qualified "
        "(the ordinary rules); flow (Python: the values the callee expression may hold); "
        "constructor (a class called reaches its __init__); implicit (a decorator applied, "
        "or for/with reaching __iter__/__next__/__enter__/__exit__); override (self.m() "
        "reaching a subclass's m where the class has no concrete m); name_only (the one "
        "function or method with a rare name, confidence 0.5)."
    )
    entrypoint: str | None
    test_framework: str | None
    evidence: Evidence

    @classmethod
    def from_domain(cls, hit: CallHit) -> CallEdge:
        st = hit.state
        return cls(
            id=strawberry.ID(hit.key),
            kind=str(st.get("kind") or ("file" if hit.label == "File" else "symbol")),
            qualified_name=hit.qualified_name,
            path=hit.path,
            repository=hit.repo,
            depth=hit.depth,
            via=strawberry.ID(hit.via),
            line=hit.line,
            lines=list(hit.lines)[:50],
            confidence=hit.confidence,
            resolution=hit.resolution,
            entrypoint=st.get("entrypoint"),
            test_framework=st.get("test_framework"),
            evidence=Evidence(
                path=hit.path, line_start=hit.line, line_end=hit.line, commit=hit.commit
            ),
        )


@strawberry.type(description="A call the resolver could not link to one declaration.")
class UnresolvedCallSite:
    path: str
    caller: str | None = strawberry.field(description="Calling symbol; null at file level.")
    callee: str = strawberry.field(description="The callee as written, e.g. `self.store.get`.")
    line: int


@strawberry.type(
    description="Unresolved call sites whose called name is the symbol's or a caller's: "
    "while count is not zero, empty lists mean none found, not none exist."
)
class UnresolvedCalls:
    names: list[str]
    count: int
    sample: list[UnresolvedCallSite]

    @classmethod
    def from_domain(cls, found: Unresolved) -> UnresolvedCalls:
        return cls(
            names=list(found.names),
            count=found.count,
            sample=[
                UnresolvedCallSite(path=s.path, caller=s.caller, callee=s.callee, line=s.line)
                for s in found.sample
            ],
        )


@strawberry.type(description="What a change to a symbol can reach.")
class Impact:
    # Each list holds at most `first` of impact(first:), which the cost rule already counted.
    callers: list[CallEdge] = strawberry.field(metadata={WITHIN_PAGE: True})
    entrypoints: list[CallEdge] = strawberry.field(metadata={WITHIN_PAGE: True})
    tests: list[CallEdge] = strawberry.field(metadata={WITHIN_PAGE: True})
    unresolved: UnresolvedCalls | None = None
    total_callers: int = strawberry.field(
        default=0,
        description="Callers the walk found (it stops at 200: at that count, a floor).",
    )
    truncated: bool = strawberry.field(
        default=False,
        description="True when a list holds only the first `first` of what was found "
        "(see truncatedLists): ask again with a larger `first`.",
    )
    truncated_lists: list[str] = strawberry.field(
        default_factory=list,
        description="Which of callers, entrypoints and tests were cut.",
        metadata={WITHIN_PAGE: True},
    )

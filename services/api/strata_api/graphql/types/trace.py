"""Requirements, decisions and trace links."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry

from strata.temporal import AsOf
from strata.trace.reads import Entity, LinkView
from strata_api.graphql.context import Info
from strata_api.graphql.types.evidence import Evidence

MAX_TEXT = 2000


@strawberry.type(
    description="A requirement link (implemented-by, affects, verified-by, constrains)."
)
class TraceLink:
    type: str
    status: str
    confidence: float
    methods: list[str]
    commit: str | None
    evidence: str | None
    candidate: str | None = strawberry.field(description="Where a STALE link's target went.")
    gone_commit: str | None = strawberry.field(
        description="A STALE link: the commit where its target vanished."
    )
    suspect: bool = strawberry.field(
        description="The target's body or signature changed since the link was made: review it."
    )
    suspect_commit: str | None = strawberry.field(description="The commit that changed it.")
    source: strawberry.ID
    target: strawberry.ID
    target_label: str
    qualified_name: str | None = strawberry.field(description="The symbol's qualified name.")
    path: str | None
    test_framework: str | None
    valid_at: datetime
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None

    @classmethod
    def from_domain(cls, view: LinkView) -> TraceLink:
        link, other = view.link, view.other
        return cls(
            type=view.type,
            status=str(link.get("status", "")),
            confidence=float(link.get("confidence", 0.0)),
            methods=list(link.get("methods") or []),
            commit=link.get("commit"),
            evidence=_clip(link.get("evidence")),
            candidate=link.get("candidate"),
            gone_commit=link.get("gone_commit"),
            suspect=bool(link.get("suspect", False)),
            suspect_commit=link.get("suspect_commit"),
            source=strawberry.ID(view.source_key),
            target=strawberry.ID(view.target_key),
            target_label=view.target_label,
            qualified_name=other.get("qualified_name"),
            path=other.get("path")
            or (view.target_key.split("|")[2] if view.target_label == "Symbol" else None),
            test_framework=other.get("test_framework"),
            valid_at=link["valid_at"],
            invalid_at=link.get("invalid_at"),
            created_at=link["created_at"],
            expired_at=link.get("expired_at"),
        )


@strawberry.type(description="A requirement (REQ-###) as of some moment.")
class Requirement:
    id: str
    key: strawberry.ID
    repository: str
    text: str
    ears: str = strawberry.field(description="EARS pattern: ubiquitous, event, state, ...")
    lint: list[str]
    checked: bool | None
    valid_at: datetime
    invalid_at: datetime | None
    created_at: datetime
    evidence: Evidence

    @classmethod
    def from_domain(cls, entity: Entity) -> Requirement:
        st = entity.state
        return cls(
            id=entity.id,
            key=strawberry.ID(entity.key),
            repository=entity.repo,
            text=str(st.get("text", ""))[:MAX_TEXT],
            ears=str(st.get("ears", "")),
            lint=list(st.get("lint") or []),
            checked=st.get("checked"),
            valid_at=st["valid_at"],
            invalid_at=st.get("invalid_at"),
            created_at=st["created_at"],
            evidence=Evidence(
                path=st.get("path"),
                line_start=st.get("line"),
                line_end=st.get("line"),
                commit=st.get("source_commit"),
            ),
        )


@strawberry.type(description="An architecture decision record as of some moment.")
class Decision:
    id: str
    key: strawberry.ID
    repository: str
    title: str
    status: str
    date: datetime | None
    summary: str | None
    components: list[str]
    constrains: list[str] = strawberry.field(
        description="Requirement ids from the ADR's `Constrains:` line."
    )
    valid_at: datetime
    invalid_at: datetime | None
    evidence: Evidence
    as_of: strawberry.Private[AsOf | None] = None

    @strawberry.field(description="The decision's links (CONSTRAINS), as of the same moment.")
    async def links(self, info: Info) -> list[TraceLink]:
        context = info.context
        if not context.principal.can_read(self.repository):
            return []
        views = await context.run(context.trace.links_from, str(self.key), self.as_of or AsOf.at())
        return [TraceLink.from_domain(v) for v in views]

    @classmethod
    def from_domain(cls, entity: Entity, as_of: AsOf | None = None) -> Decision:
        st = entity.state
        return cls(
            id=entity.id,
            key=strawberry.ID(entity.key),
            repository=entity.repo,
            title=str(st.get("title", ""))[:300],
            status=str(st.get("status", "")),
            date=st.get("date"),
            summary=_clip(st.get("summary")),
            components=list(st.get("components") or []),
            constrains=list(st.get("constrains") or []),
            valid_at=st["valid_at"],
            invalid_at=st.get("invalid_at"),
            evidence=Evidence(
                path=st.get("path"), line_start=None, line_end=None, commit=st.get("source_commit")
            ),
            as_of=as_of,
        )


@strawberry.type
class StatusCount:
    type: str
    status: str
    count: int


@strawberry.type(description="The state of a repository's traceability.")
class TraceReport:
    repository: str
    requirements: int
    counts: list[StatusCount]
    stale: list[TraceLink]
    unimplemented: list[str] = strawberry.field(description="Requirements with no implementation.")
    untested: list[str] = strawberry.field(description="Requirements with no verifying test.")
    orphaned: list[TraceLink] = strawberry.field(
        description="Links from requirements that are no longer declared."
    )
    suspect: list[TraceLink] = strawberry.field(
        description="Links whose target's body or signature changed since they were made."
    )
    suspect_count: int


def _clip(value: Any) -> str | None:
    return None if value is None else str(value)[:MAX_TEXT]

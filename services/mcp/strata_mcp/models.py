"""Typed inputs and outputs of the MCP tools (their JSON schemas are the tools' schemas)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from strata.code.reads import CallHit, SymbolView
from strata.errors import StrataError
from strata.graph.reads import Change, FactVersion
from strata.search.service import SearchHit, SearchResult
from strata.temporal import AsOf
from strata.trace.reads import Entity, LinkView
from strata_mcp.context_models import CodeChangesOut

MAX_TEXT = 1000


class AsOfArg(BaseModel):
    """Read the graph as of a valid time and a known (transaction) time; default now, now."""

    model_config = ConfigDict(extra="forbid")

    valid_at: datetime | None = Field(
        default=None, description="When the facts were true in the world (ISO 8601 with zone)."
    )
    known_at: datetime | None = Field(
        default=None, description="What Strata believed at this time (ISO 8601 with zone)."
    )

    @staticmethod
    def resolve(value: AsOfArg | None) -> AsOf:
        if value is None:
            return AsOf.at()
        return AsOf.at(value.valid_at, value.known_at)


# Tool parameters shared by several tool modules.
AsOfParam = Annotated[
    AsOfArg | None, Field(description="Read as of {valid_at, known_at}; default now, now")
]
Repository = Annotated[str, Field(min_length=1, max_length=200, description="Repository name")]


class Evidence(BaseModel):
    """Where the answer comes from: file, line span and commit."""

    path: str | None
    line_start: int | None
    line_end: int | None
    commit: str | None


class Match(BaseModel):
    retriever: str = Field(description="name, fulltext, coverage, vector or graph")
    rank: int
    score: float
    via: str | None = Field(
        default=None, description="graph: the relationship and hit it neighbours"
    )


class Hit(BaseModel):
    id: str = Field(description="The entity's stable key: pass it to symbol/callers/impact/history")
    label: str
    kind: str
    qualified_name: str
    score: float
    summary: str | None
    matches: list[Match]
    evidence: Evidence

    @classmethod
    def of(cls, hit: SearchHit) -> Hit:
        return cls(
            id=hit.key,
            label=hit.label,
            kind=hit.kind,
            qualified_name=hit.qualified_name,
            score=hit.score,
            summary=hit.summary,
            matches=[
                Match(retriever=m.retriever, rank=m.rank, score=m.score, via=m.via)
                for m in hit.matches
            ],
            evidence=Evidence(**vars_of(hit.evidence)),
        )


class FileRank(BaseModel):
    path: str
    score: float
    hit_ids: list[str] = Field(description="Its best hits (the file or its symbols), best first")


class SearchOut(BaseModel):
    query: str
    repository: str
    hits: list[Hit]
    files: list[FileRank] = Field(
        description=(
            "The files the hits fall in, best first (at most `first`): "
            "where a change to what the query describes would most likely be made"
        )
    )
    retrievers: list[str]
    pending_embeddings: int
    notes: list[str]

    @classmethod
    def of(cls, result: SearchResult, first: int) -> SearchOut:
        return cls(
            query=result.query,
            repository=result.repository,
            hits=[Hit.of(h) for h in result.hits],
            files=[
                FileRank(path=f.path, score=f.score, hit_ids=list(f.keys))
                for f in result.files[:first]
            ],
            retrievers=list(result.retrievers),
            pending_embeddings=result.pending_embeddings,
            notes=list(result.notes),
        )


class Reason(BaseModel):
    """Why an answer is empty: NOT_FOUND or BEFORE_HISTORY (with the first indexed time)."""

    code: str
    message: str
    first_indexed_at: str | None = None

    @classmethod
    def of(cls, error: StrataError | None) -> Reason | None:
        if error is None:
            return None
        first = error.details.get("first_indexed_at")
        return cls(code=error.code.upper(), message=error.message, first_indexed_at=first)


class SymbolOut(BaseModel):
    found: bool = Field(description="False: no such symbol as of that moment (or not readable)")
    id: str
    reason: Reason | None = Field(default=None, description="When not found: why")
    repository: str | None = None
    qualified_name: str | None = None
    kind: str | None = None
    signature: str | None = None
    docstring: str | None = None
    entrypoint: str | None = None
    test_framework: str | None = None
    valid_at: datetime | None = None
    evidence: Evidence | None = None

    @classmethod
    def of(cls, key: str, view: SymbolView | None, why: StrataError | None = None) -> SymbolOut:
        if view is None:
            return cls(found=False, id=key, reason=Reason.of(why))
        st = view.state
        return cls(
            found=True,
            id=view.key,
            repository=view.repo,
            qualified_name=str(st.get("qualified_name") or view.qualname),
            kind=view.kind,
            signature=_clip(st.get("signature")),
            docstring=_clip(st.get("docstring")),
            entrypoint=st.get("entrypoint"),
            test_framework=st.get("test_framework"),
            valid_at=st.get("valid_at"),
            evidence=Evidence(
                path=view.path,
                line_start=st.get("line_start"),
                line_end=st.get("line_end"),
                commit=st.get("source_commit"),
            ),
        )


class Call(BaseModel):
    id: str
    qualified_name: str
    depth: int
    via: str = Field(description="The symbol this hop connects to")
    line: int = Field(description="The line of the call in the caller's file")
    resolution: str
    confidence: float
    evidence: Evidence

    @classmethod
    def of(cls, hit: CallHit) -> Call:
        return cls(
            id=hit.key,
            qualified_name=hit.qualified_name,
            depth=hit.depth,
            via=hit.via,
            line=hit.line,
            resolution=hit.resolution,
            confidence=hit.confidence,
            evidence=Evidence(
                path=hit.path,
                line_start=hit.line,
                line_end=hit.line,
                commit=hit.commit,
            ),
        )


class CallsOut(BaseModel):
    id: str
    calls: list[Call]
    truncated: bool = Field(description="True when more were found than `first`")


class UnresolvedSiteOut(BaseModel):
    path: str
    caller: str | None
    callee: str
    line: int


class UnresolvedOut(BaseModel):
    """Call sites the resolver could not link whose called name could reach the symbol:
    while ``count`` is not zero, an empty ``tests`` list means "none found", not "none"."""

    count: int
    by_name: dict[str, int]
    sample: list[UnresolvedSiteOut]


class ImpactOut(BaseModel):
    id: str
    callers: list[Call]
    entrypoints: list[Call]
    tests: list[Call]
    total_callers: int
    truncated: bool = Field(
        default=False, description="True when a list holds only the first `first` found"
    )
    truncated_lists: list[str] = Field(
        default_factory=list, description="Which of callers, entrypoints, tests were cut"
    )
    unresolved: UnresolvedOut


class Version(BaseModel):
    valid_at: datetime
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    content: dict[str, Any]
    commit: str | None

    @classmethod
    def of(cls, version: FactVersion) -> Version:
        content = {k: v for k, v in version.props.items() if not k.startswith("source_")}
        return cls(
            valid_at=version.valid_at,
            invalid_at=version.invalid_at,
            created_at=version.created_at,
            expired_at=version.expired_at,
            content=_jsonable(content),
            commit=version.props.get("source_commit"),
        )


class HistoryOut(BaseModel):
    id: str
    versions: list[Version]


class ChangeOut(BaseModel):
    type: str
    change: str
    at: datetime
    source: str
    target: str
    commit: str | None

    @classmethod
    def of(cls, change: Change) -> ChangeOut:
        return cls(
            type=change.type,
            change=change.change,
            at=change.at,
            source=change.src,
            target=change.dst,
            commit=change.version.props.get("source_commit"),
        )


class ChangesOut(BaseModel):
    repository: str
    changes: list[ChangeOut]
    code: CodeChangesOut | None = None  # `readable`: symbol changes by commit


class RequirementOut(BaseModel):
    found: bool
    id: str
    reason: Reason | None = Field(default=None, description="When not found: why")
    text: str | None = None
    ears: str | None = None
    valid_at: datetime | None = None
    evidence: Evidence | None = None

    @classmethod
    def of(
        cls, req_id: str, entity: Entity | None, why: StrataError | None = None
    ) -> RequirementOut:
        if entity is None:
            return cls(found=False, id=req_id, reason=Reason.of(why))
        st = entity.state
        line = st.get("line")
        return cls(
            found=True,
            id=entity.id,
            text=_clip(st.get("text")),
            ears=st.get("ears"),
            valid_at=st.get("valid_at"),
            evidence=Evidence(
                path=st.get("path"), line_start=line, line_end=line, commit=st.get("source_commit")
            ),
        )


class Link(BaseModel):
    id: str = Field(description="The linked symbol's id")
    qualified_name: str | None
    type: str
    status: str | None
    confidence: float | None
    commit: str | None = Field(description="The commit the link was declared or proposed at")

    @classmethod
    def of(cls, view: LinkView) -> Link:
        return cls(
            id=view.target_key,
            qualified_name=view.other.get("qualified_name"),
            type=view.type,
            status=view.link.get("status"),
            confidence=view.link.get("confidence"),
            commit=view.link.get("commit"),
        )


class LinksOut(BaseModel):
    requirement: str
    links: list[Link]


def vars_of(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__slots__}


def _clip(value: object) -> str | None:
    return None if value is None else str(value)[:MAX_TEXT]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value

"""A code symbol as of some moment."""

from __future__ import annotations

from datetime import datetime

import strawberry

from strata.code.reads import SymbolView
from strata_api.graphql.types.evidence import Evidence

MAX_TEXT = 1000
MAX_UNRESOLVED = 20


@strawberry.type(description="A declaration (class, function, method, ...) in a repository.")
class Symbol:
    id: strawberry.ID
    repository: str
    ref: str
    path: str
    name: str
    qualname: str = strawberry.field(description="Name path inside its file, e.g. Class.method.")
    qualified_name: str
    kind: str
    language: str | None
    signature: str | None
    docstring: str | None
    line_start: int | None
    line_end: int | None
    test_framework: str | None
    entrypoint: str | None
    framework: str | None
    unresolved_calls: list[str] = strawberry.field(
        description="Calls from this symbol that no declaration matched (name@line, first 20)."
    )
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime | None
    evidence: Evidence

    @classmethod
    def from_domain(cls, view: SymbolView) -> Symbol:
        st = view.state
        return cls(
            id=strawberry.ID(view.key),
            repository=view.repo,
            ref=view.ref,
            path=view.path,
            name=view.name,
            qualname=view.qualname,
            qualified_name=str(st.get("qualified_name") or view.qualname),
            kind=view.kind,
            language=st.get("language"),
            signature=_clip(st.get("signature")),
            docstring=_clip(st.get("docstring")),
            line_start=st.get("line_start"),
            line_end=st.get("line_end"),
            test_framework=st.get("test_framework"),
            entrypoint=st.get("entrypoint"),
            framework=st.get("framework"),
            unresolved_calls=list(st.get("unresolved_calls") or [])[:MAX_UNRESOLVED],
            valid_at=st.get("valid_at"),
            invalid_at=st.get("invalid_at"),
            created_at=st.get("created_at"),
            evidence=Evidence(
                path=view.path,
                line_start=st.get("line_start"),
                line_end=st.get("line_end"),
                commit=st.get("source_commit"),
            ),
        )


def _clip(value: object) -> str | None:
    return None if value is None else str(value)[:MAX_TEXT]

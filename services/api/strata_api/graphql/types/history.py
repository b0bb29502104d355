"""Versions of facts and changes between two instants."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import cast

import strawberry
from strawberry.scalars import JSON

from strata.graph.reads import Change as ChangeView
from strata.graph.reads import FactVersion as VersionView
from strata_api.graphql.types.evidence import Evidence

BOOKKEEPING = {
    "repo",
    "scope",
    "hash",
    "ontology",
    "change",
    "source_commit",
    "source_path",
    "source_line",
    "source_doc",
}


@strawberry.enum(description="Which time axis a change window is on.")
class Axis(Enum):
    VALID = "valid"
    KNOWN = "known"


@strawberry.type(description="One version of a fact with its four times and its source.")
class FactVersion:
    valid_at: datetime
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    invalidated_at: datetime | None = strawberry.field(
        description="When an open-ended version's valid end became known (closed in place)."
    )
    change: str | None
    ontology_version: int | None
    content: JSON = strawberry.field(description="The fact's properties (bounded).")
    evidence: Evidence

    @classmethod
    def from_domain(cls, version: VersionView) -> FactVersion:
        props = version.props
        content = {k: _bounded(v) for k, v in props.items() if k not in BOOKKEEPING}
        return cls(
            valid_at=version.valid_at,
            invalid_at=version.invalid_at,
            created_at=version.created_at,
            expired_at=version.expired_at,
            invalidated_at=version.invalidated_at,
            change=props.get("change"),
            ontology_version=props.get("ontology"),
            content=cast(JSON, content),
            evidence=Evidence(
                path=props.get("source_path"),
                line_start=props.get("line_start") or props.get("source_line"),
                line_end=props.get("line_end"),
                commit=props.get("source_commit"),
            ),
        )


@strawberry.type(description="A fact opened or closed inside a window.")
class Change:
    type: str
    source: strawberry.ID
    source_label: str
    target: strawberry.ID
    target_label: str
    change: str = strawberry.field(description="opened or closed")
    at: datetime
    version: FactVersion

    @classmethod
    def from_domain(cls, change: ChangeView) -> Change:
        return cls(
            type=change.type,
            source=strawberry.ID(change.src),
            source_label=change.src_label,
            target=strawberry.ID(change.dst),
            target_label=change.dst_label,
            change=change.change,
            at=change.at,
            version=FactVersion.from_domain(change.version),
        )


def _bounded(value: object) -> object:
    if isinstance(value, str):
        return value[:1000]
    if isinstance(value, list):
        return [_bounded(v) for v in value[:50]]
    if isinstance(value, datetime):
        return value.isoformat()
    return value

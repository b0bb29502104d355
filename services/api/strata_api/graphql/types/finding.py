"""A stored finding: a problem the knowledge or trace sync found in a repository file."""

from __future__ import annotations

from datetime import datetime

import strawberry

from strata.trace.reads import FindingView

MAX_MESSAGE = 2000


@strawberry.type(
    description="A problem in a requirement, ADR or trace file (refused, dropped or linted)."
)
class Finding:
    layer: str = strawberry.field(description="The sync that found it: knowledge or trace.")
    path: str
    line: int
    kind: str = strawberry.field(description="The rule, e.g. unknown-commit, duplicate-id, lint.")
    severity: str = strawberry.field(
        description="error: something was refused or dropped; warning: kept, worth fixing."
    )
    message: str
    commit: str | None = strawberry.field(description="The commit the finding was recorded at.")
    valid_at: datetime
    invalid_at: datetime | None
    created_at: datetime

    @classmethod
    def from_domain(cls, view: FindingView) -> Finding:
        st = view.state
        return cls(
            layer=view.layer,
            path=str(st.get("path", "")),
            line=int(st.get("line", 0)),
            kind=str(st.get("rule", "")),
            severity=str(st.get("severity", "error")),
            message=str(st.get("message", ""))[:MAX_MESSAGE],
            commit=st.get("source_commit"),
            valid_at=st["valid_at"],
            invalid_at=st.get("invalid_at"),
            created_at=st["created_at"],
        )

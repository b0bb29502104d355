"""An indexed ref of a repository."""

from __future__ import annotations

from datetime import datetime

import strawberry

from strata.code.reads import BranchView


@strawberry.type(description="An indexed ref of a repository and the commit it is at.")
class Branch:
    ref: str
    head: str
    committed_at: datetime | None
    files: int | None
    symbols: int | None
    valid_at: datetime

    @classmethod
    def from_domain(cls, view: BranchView) -> Branch:
        return cls(
            ref=view.ref,
            head=view.head,
            committed_at=view.committed_at,
            files=view.files,
            symbols=view.symbols,
            valid_at=view.valid_at,
        )

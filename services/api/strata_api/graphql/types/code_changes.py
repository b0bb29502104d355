"""Readable symbol changes: classified, grouped by commit, paged."""

from __future__ import annotations

from datetime import datetime

import strawberry

from strata.code.changes import ChangesPage
from strata.code.changes import CommitChanges as CommitView
from strata.code.changes import SymbolChange as ChangeView
from strata_api.graphql.cost import WITHIN_PAGE


@strawberry.type(description="What happened to one symbol at one commit.")
class CodeChange:
    change: str = strawberry.field(description="added, removed, modified, moved or renamed.")
    at: datetime
    commit: str | None
    id: strawberry.ID
    path: str
    qualname: str
    qualified_name: str
    kind: str
    line: int | None
    previous_id: strawberry.ID | None = strawberry.field(
        description="moved / renamed: the symbol with the same body or shape it replaced."
    )
    previous_path: str | None
    previous_qualname: str | None
    cursor: str

    @classmethod
    def from_domain(cls, c: ChangeView) -> CodeChange:
        return cls(
            change=c.change,
            at=c.at,
            commit=c.commit,
            id=strawberry.ID(c.key),
            path=c.path,
            qualname=c.qualname,
            qualified_name=c.qualified_name,
            kind=c.kind,
            line=c.line,
            previous_id=strawberry.ID(c.previous_key) if c.previous_key else None,
            previous_path=c.previous_path,
            previous_qualname=c.previous_qualname,
            cursor=c.cursor,
        )


@strawberry.type(description="The changes of one commit, with its author and message if known.")
class CommitCodeChanges:
    commit: str | None
    at: datetime
    author: str | None
    message: str | None
    # codeChanges(first:) bounds the changes of all commits together, and so the commits.
    changes: list[CodeChange] = strawberry.field(metadata={WITHIN_PAGE: True})

    @classmethod
    def from_domain(cls, group: CommitView) -> CommitCodeChanges:
        return cls(
            commit=group.commit,
            at=group.at,
            author=group.author,
            message=group.message,
            changes=[CodeChange.from_domain(c) for c in group.changes],
        )


@strawberry.type(description="One page of code changes in (time, path, name) order.")
class CodeChangesPage:
    commits: list[CommitCodeChanges] = strawberry.field(metadata={WITHIN_PAGE: True})
    total: int = strawberry.field(description="Matching changes in the window, all pages.")
    has_next_page: bool
    end_cursor: str | None
    partial: bool = strawberry.field(description="The window held more versions than one scan.")

    @classmethod
    def from_domain(cls, page: ChangesPage) -> CodeChangesPage:
        return cls(
            commits=[CommitCodeChanges.from_domain(g) for g in page.commits],
            total=page.total,
            has_next_page=page.has_next,
            end_cursor=page.end_cursor,
            partial=page.partial,
        )

    @classmethod
    def empty(cls) -> CodeChangesPage:
        return cls(commits=[], total=0, has_next_page=False, end_cursor=None, partial=False)

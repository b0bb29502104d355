"""What the `context` tool and the readable part of `changes` return."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from strata.code.changes import ChangesPage
from strata.context.pack import Pack


class PackLineOut(BaseModel):
    text: str
    citation: str  # path:line@commit
    path: str | None
    line: int | None
    commit: str | None


class PackSectionOut(BaseModel):
    title: str
    lines: list[PackLineOut]


class CandidateOut(BaseModel):
    id: str
    qualified_name: str
    kind: str
    citation: str


class ContextOut(BaseModel):
    """A task's context pack: gate verdict, cited sections, and the same as markdown."""

    task: str
    repository: str
    intent: str
    target: str | None
    target_name: str | None
    sufficient: bool
    reasons: list[str]
    budget: int
    tokens: int
    dropped: int
    notes: list[str]
    sections: list[PackSectionOut]
    candidates: list[CandidateOut]
    markdown: str

    @classmethod
    def of(cls, pack: Pack) -> ContextOut:
        data = pack.to_dict()
        data.pop("as_of", None)
        return cls.model_validate(data)


class CodeChangeOut(BaseModel):
    change: str  # added | removed | modified | moved | renamed
    at: datetime
    commit: str | None
    id: str
    path: str
    qualified_name: str
    kind: str
    line: int | None
    previous_id: str | None = None
    previous_path: str | None = None
    previous_qualname: str | None = None


class CommitChangesOut(BaseModel):
    commit: str | None
    at: datetime
    author: str | None
    message: str | None
    changes: list[CodeChangeOut]


class CodeChangesOut(BaseModel):
    """Symbol changes classified and grouped by commit; pass ``end_cursor`` as ``after``."""

    commits: list[CommitChangesOut]
    total: int
    has_next: bool
    end_cursor: str | None

    @classmethod
    def of(cls, page: ChangesPage) -> CodeChangesOut:
        return cls(
            commits=[
                CommitChangesOut(
                    commit=g.commit,
                    at=g.at,
                    author=g.author,
                    message=g.message,
                    changes=[
                        CodeChangeOut(
                            change=c.change,
                            at=c.at,
                            commit=c.commit,
                            id=c.key,
                            path=c.path,
                            qualified_name=c.qualified_name,
                            kind=c.kind,
                            line=c.line,
                            previous_id=c.previous_key,
                            previous_path=c.previous_path,
                            previous_qualname=c.previous_qualname,
                        )
                        for c in g.changes
                    ],
                )
                for g in page.commits
            ],
            total=page.total,
            has_next=page.has_next,
            end_cursor=page.end_cursor,
        )

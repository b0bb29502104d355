"""A background job (reindex, ingest) and its progress."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from strata.jobstore import JobRecord
from strata_api.graphql.types.job_state import JobState


@strawberry.type(description="A background job (reindex, ingest) and its progress.")
class Job:
    id: strawberry.ID
    kind: str
    repo: str
    state: JobState
    ref: str | None = strawberry.field(description="The ref the job indexes, if any.")
    after: str | None = strawberry.field(description="The commit the job indexes up to.")
    progress: JSON
    result: JSON = strawberry.field(
        description="What the job did, once it succeeded (counts; findings of a sync or settle)."
    )
    error: JSON | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int = strawberry.field(
        description="Runs started (a retry or a redelivery after a lost worker is one more)."
    )

    @classmethod
    def from_domain(cls, record: JobRecord) -> Job:
        ref = record.params.get("ref")
        after = record.params.get("after")
        return cls(
            id=strawberry.ID(record.id),
            kind=record.kind,
            repo=record.repo,
            state=JobState(record.state),
            ref=ref if isinstance(ref, str) else None,
            after=after if isinstance(after, str) else None,
            progress=JSON(record.progress),
            result=JSON(record.result),
            error=JSON(record.error) if record.error is not None else None,
            created_at=record.created_at,
            started_at=record.started_at,
            finished_at=record.finished_at,
            attempts=record.attempts,
        )

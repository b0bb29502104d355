"""Job records (reindex, ingest) as GraphQL: the ``Job`` type and ``job`` / ``jobs`` queries.

Both queries only ever show jobs of repositories the caller may read: a job of
another repository is indistinguishable from one that does not exist.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from enum import Enum
from typing import Annotated

import redis
import strawberry
from strawberry.scalars import JSON

from strata.errors import NotFound
from strata.jobstore import JobRecord
from strata_api.graphql.context import Context
from strata_api.tasks import QueueUnavailable

Info = strawberry.Info[Context, None]
MAX_JOB_ID = 64


@strawberry.enum(description="Where a job is in its life.")
class JobState(Enum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


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
        )


@strawberry.type
class JobQuery:
    @strawberry.field(description="One job by id (null when missing or not visible to you).")
    async def job(self, info: Info, id: strawberry.ID) -> Job | None:
        if not id or len(id) > MAX_JOB_ID:
            return None
        try:
            record = await asyncio.to_thread(info.context.jobs.get, str(id))
        except NotFound:
            return None
        except redis.RedisError as exc:
            raise QueueUnavailable("the job store is unavailable") from exc
        if not info.context.principal.can_read(record.repo):
            return None
        return Job.from_domain(record)

    @strawberry.field(description="The newest jobs of a repository you may read, newest first.")
    async def jobs(
        self,
        info: Info,
        repository: str,
        first: Annotated[
            int, strawberry.argument(description="How many (default 10; capped by the server).")
        ] = 10,
    ) -> list[Job]:
        context = info.context
        if not context.principal.can_read(repository):
            return []
        limit = max(0, min(first, context.settings.graphql_max_page_size))
        if limit == 0:
            return []
        try:
            records = await asyncio.to_thread(context.jobs.for_repo, repository, limit=limit)
        except redis.RedisError as exc:
            raise QueueUnavailable("the job store is unavailable") from exc
        return [Job.from_domain(record) for record in records]

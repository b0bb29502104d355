"""Job records (reindex, ingest) as GraphQL: the ``job`` and ``jobs`` queries.

Both queries only ever show jobs of repositories the caller may read: a job of
another repository is indistinguishable from one that does not exist.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import redis
import strawberry

from strata.errors import NotFound
from strata_api.graphql.context import Info
from strata_api.graphql.cost import MIN_PAGE
from strata_api.graphql.types.job import Job
from strata_api.tasks import QueueUnavailable

MAX_JOB_ID = 64


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

    @strawberry.field(
        description="The newest jobs of a repository you may read, newest first.",
        metadata={MIN_PAGE: 0},  # first: 0 is an empty page, not a mistake
    )
    async def jobs(
        self,
        info: Info,
        repository: str,
        first: Annotated[
            int, strawberry.argument(description="How many (default 10; capped by the server).")
        ] = 10,
        dead_letter: Annotated[
            bool,
            strawberry.argument(
                description="Only the dead letters: jobs that ended FAILED after their "
                "attempts (newest failure first); a later successful run removes one."
            ),
        ] = False,
    ) -> list[Job]:
        context = info.context
        if not context.principal.can_read(repository):
            return []
        limit = max(0, min(first, context.settings.graphql_max_page_size))
        if limit == 0:
            return []
        try:
            read = context.jobs.dead_letters if dead_letter else context.jobs.for_repo
            records = await asyncio.to_thread(read, repository, limit=limit)
        except redis.RedisError as exc:
            raise QueueUnavailable("the job store is unavailable") from exc
        return [Job.from_domain(record) for record in records]

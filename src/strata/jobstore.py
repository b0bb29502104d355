"""Job records in Redis: state, progress and errors of reindex and ingest jobs.

The API creates a record when it enqueues a task; the worker moves it through
``running`` to ``succeeded`` or ``failed`` and reports progress counters on
the way. Records expire after ``RETENTION_S``.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import redis

from strata.errors import NotFound

JobState = Literal["queued", "running", "succeeded", "failed"]
RETENTION_S = 30 * 24 * 3600
_KEY = "strata:job:{id}"
_REPO_INDEX = "strata:jobs:{repo}"


@dataclass(frozen=True, slots=True)
class JobRecord:
    id: str
    kind: str
    repo: str
    state: JobState
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    progress: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, raw: dict[bytes, bytes]) -> JobRecord:
        data = {k.decode(): v.decode() for k, v in raw.items()}

        def when(name: str) -> datetime | None:
            value = data.get(name)
            return datetime.fromisoformat(value) if value else None

        created = when("created_at")
        return cls(
            id=data["id"],
            kind=data["kind"],
            repo=data["repo"],
            state=data["state"],  # type: ignore[arg-type]
            created_at=created or datetime.now(UTC),
            started_at=when("started_at"),
            finished_at=when("finished_at"),
            progress=json.loads(data.get("progress") or "{}"),
            result=json.loads(data.get("result") or "{}"),
            error=json.loads(data["error"]) if data.get("error") else None,
            params=json.loads(data.get("params") or "{}"),
        )


def new_job_id() -> str:
    return uuid.uuid4().hex


class JobStore:
    """Reads and writes job records; one instance per process."""

    def __init__(self, client: redis.Redis) -> None:
        self._redis = client

    def create(
        self,
        kind: str,
        repo: str,
        *,
        job_id: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> JobRecord:
        now = datetime.now(UTC)
        record = JobRecord(
            id=job_id or new_job_id(),
            kind=kind,
            repo=repo,
            state="queued",
            created_at=now,
            params=params or {},
        )
        key = _KEY.format(id=record.id)
        pipe = self._redis.pipeline()
        pipe.hset(
            key,
            mapping={
                "id": record.id,
                "kind": kind,
                "repo": repo,
                "state": "queued",
                "created_at": now.isoformat(),
                "params": json.dumps(record.params),
            },
        )
        pipe.expire(key, RETENTION_S)
        pipe.zadd(_REPO_INDEX.format(repo=repo), {record.id: now.timestamp()})
        pipe.expire(_REPO_INDEX.format(repo=repo), RETENTION_S)
        pipe.execute()
        return record

    def _update(self, job_id: str, **fields: str) -> None:
        key = _KEY.format(id=job_id)
        if not self._redis.exists(key):
            raise NotFound(f"no job {job_id!r}", job_id=job_id)
        mapping: dict[Any, Any] = dict(fields)
        self._redis.hset(key, mapping=mapping)

    def start(self, job_id: str) -> None:
        self._update(job_id, state="running", started_at=datetime.now(UTC).isoformat(), error="")

    def progress(self, job_id: str, **counters: Any) -> None:
        self._update(job_id, progress=json.dumps(counters, default=str))

    def succeed(self, job_id: str, result: dict[str, Any]) -> None:
        self._update(
            job_id,
            state="succeeded",
            finished_at=datetime.now(UTC).isoformat(),
            result=json.dumps(result, default=str),
        )

    def fail(self, job_id: str, error: dict[str, Any], *, final: bool = True) -> None:
        fields = {"error": json.dumps(error, default=str)}
        if final:
            fields |= {"state": "failed", "finished_at": datetime.now(UTC).isoformat()}
        self._update(job_id, **fields)

    def get(self, job_id: str) -> JobRecord:
        raw = self._redis.hgetall(_KEY.format(id=job_id))
        if not raw:
            raise NotFound(f"no job {job_id!r}", job_id=job_id)
        return JobRecord.load(raw)  # type: ignore[arg-type]

    def for_repo(self, repo: str, *, limit: int = 20) -> list[JobRecord]:
        ids: list[bytes] = self._redis.zrevrange(  # type: ignore[assignment]
            _REPO_INDEX.format(repo=repo), 0, max(0, limit - 1)
        )
        pipe = self._redis.pipeline(transaction=False)  # one round trip for the page
        for raw_id in ids:
            pipe.hgetall(_KEY.format(id=raw_id.decode()))
        return [JobRecord.load(raw) for raw in pipe.execute() if raw]

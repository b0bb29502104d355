"""Job records in Redis: state, progress and errors of reindex and ingest jobs.

The API creates a record when it enqueues a task; the worker moves it through
``running`` to ``succeeded`` or ``failed`` and reports progress counters on
the way. Records expire after ``RETENTION_S``.

A running job carries a heartbeat (``heartbeat_at``, renewed every
``heartbeat_s`` by the worker). A worker can vanish without a word (a SIGKILL,
an OOM kill, a lost node): every read of a record whose heartbeat is older
than :func:`lost_after` marks it failed with a :class:`WorkerLost` error, so no
reader ever waits on a job nobody runs. Readers judge by the heartbeat only
(a busy machine is not a dead worker); the record also names its run's
process (``owner``, :class:`strata.locks.Owner`), which a worker on the same
host uses to tell a second delivery of a job whose run is gone from one that
still runs (strata_workers.runner.already_ended). A live worker's reaper
(:mod:`strata.jobs_recovery`) sends a vanished run's job again at once (its
run's own message is kept on the record while it runs); the new run counts the
lost attempt, and after ``MAX_LOST_RUNS`` the job fails for good.

A job that ends FAILED is also listed in its repository's dead-letter list
(:meth:`JobStore.dead_letters`, newest first, the ``jobs(deadLetter: true)``
query) until a later run of it succeeds.

Workers talk to Redis through :func:`redis_client`, which rides out a Redis
restart (reconnects with backoff for about half a minute), so a restart
neither fails a running job nor loses a heartbeat for long.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import BusyLoadingError
from redis.retry import Retry

from strata import jobs_scripts as lua
from strata.errors import NotFound, StrataError
from strata.locks import Owner

JobState = Literal["queued", "running", "succeeded", "failed"]
RETENTION_S = 30 * 24 * 3600
LOST_AFTER_BEATS = 12  # 60 s at the workers' 5 s beat: a busy machine is not a dead worker
LOST_AFTER_MIN_S = 30.0
_KEY = "strata:job:{id}"
_REPO_INDEX = "strata:jobs:{repo}"
_DEAD = "strata:jobs:dead:{repo}"
# The task message of a run (task, queue, kwargs) while it runs, kept apart from the
# record so that reading records stays small (a follow-up carries symbol ids).
_MESSAGE = "strata:job:{id}:message"
# Runs that started and have not ended (scored by start time): what a reaper scans.
RUNNING = "strata:jobs:running"
# Backoff 0.1, 0.2, 0.4 ... capped at 2 s: about 35 s of retries before an error.
REDIS_RETRIES = 20


def redis_client(url: str) -> redis.Redis:
    """A client that reconnects through a Redis restart (and its AOF load) instead of
    failing the first command that meets it."""
    return redis.Redis.from_url(
        url,
        retry=Retry(ExponentialBackoff(cap=2.0, base=0.1), REDIS_RETRIES),
        retry_on_error=[redis.ConnectionError, redis.TimeoutError, BusyLoadingError],
        socket_connect_timeout=2,
        health_check_interval=15,
    )


class WorkerLost(StrataError):
    """The worker running the job died or stopped answering before the job ended."""

    code = "worker_lost"
    retryable = True


class JobTimedOut(StrataError):
    """The job ran past its time limit and was stopped."""

    code = "time_limit"


class UnexpectedJobError(StrataError):
    """The job failed on an error Strata did not expect (the worker log has the trace)."""

    code = "internal_error"


def job_key(job_id: str) -> str:
    """The Redis hash of one job record."""
    return _KEY.format(id=job_id)


def message_key(job_id: str) -> str:
    """The Redis string holding a running job's task message (JSON)."""
    return _MESSAGE.format(id=job_id)


def dead_key(repo: str) -> str:
    """The Redis sorted set of one repository's dead letters."""
    return _DEAD.format(repo=repo)


def lost_after(heartbeat_s: float) -> float:
    """Seconds without a heartbeat after which a running job counts as lost."""
    return max(LOST_AFTER_BEATS * heartbeat_s, heartbeat_s + LOST_AFTER_MIN_S)


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
    heartbeat_at: datetime | None = None
    heartbeat_s: float | None = None
    worker: str | None = None  # host:pid of the process running (or that last ran) it
    owner: str | None = None  # strata.locks.Owner of that process (host, pidns, pid, start)
    attempts: int = 0  # runs started (a retry or a redelivery is one more)
    lost: int = 0  # runs whose worker vanished before they ended
    run_open: bool = False  # a run started and recorded no end (yet)
    supervisor: str | None = None  # Owner of the run's parent (a prefork worker's main)
    queue: str | None = None  # the queue the run's message came from
    requeued: int = 0  # times a reaper sent the job again after its worker vanished

    def is_lost(self, now: datetime) -> bool:
        """Running, with a heartbeat older than the record's own interval allows."""
        if self.state != "running" or not self.heartbeat_s:
            return False
        last = self.heartbeat_at or self.started_at
        if last is None:
            return False
        return (now - last).total_seconds() > lost_after(self.heartbeat_s)

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
            heartbeat_at=when("heartbeat_at"),
            heartbeat_s=float(data["heartbeat_s"]) if data.get("heartbeat_s") else None,
            worker=data.get("worker") or None,
            owner=data.get("owner") or None,
            attempts=int(data.get("attempts") or 0),
            lost=int(data.get("lost") or 0),
            run_open=data.get("run_open") == "1",
            supervisor=data.get("supervisor") or None,
            queue=data.get("queue") or None,
            requeued=int(data.get("requeued") or 0),
        )


def new_job_id() -> str:
    return uuid.uuid4().hex


class JobStore:
    """Reads and writes job records; one instance per process."""

    def __init__(self, client: redis.Redis) -> None:
        self._redis = client

    @property
    def client(self) -> redis.Redis:
        """The Redis client (for :mod:`strata.jobs_recovery`)."""
        return self._redis

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

    def _update(self, job_id: str, *, clear: tuple[str, ...] = (), **fields: str) -> None:
        key = _KEY.format(id=job_id)
        if not self._redis.exists(key):
            raise NotFound(f"no job {job_id!r}", job_id=job_id)
        mapping: dict[Any, Any] = dict(fields)
        pipe = self._redis.pipeline()
        pipe.hset(key, mapping=mapping)
        if clear:
            pipe.hdel(key, *clear)
        pipe.execute()

    def start(
        self,
        job_id: str,
        *,
        worker: str = "",
        heartbeat_s: float | None = None,
        message: dict[str, Any] | None = None,
    ) -> int:
        """Mark a run started (with a first heartbeat); how many earlier runs were lost.

        A run that started and never recorded an end (``succeed`` or ``fail``)
        had its worker vanish: the next start counts it. ``message`` (task,
        queue, kwargs) is what a reaper sends again should this run's worker
        vanish; the run's parent process is recorded as its supervisor.
        """
        now = datetime.now(UTC)
        lost = self._redis.eval(
            lua.START,
            3,
            _KEY.format(id=job_id),
            RUNNING,
            message_key(job_id),
            now.isoformat(),
            str(heartbeat_s or ""),
            worker,
            str(Owner.current()),
            str(Owner.of(os.getppid())),
            json.dumps(message, default=str) if message else "",
            now.timestamp(),
            (message or {}).get("queue") or "",
            RETENTION_S,
        )
        if int(lost) < 0:
            raise NotFound(f"no job {job_id!r}", job_id=job_id)
        return int(lost)

    def message(self, job_id: str) -> dict[str, Any] | None:
        """The task message of the job's open run (None once it ended, or never kept)."""
        raw = self._redis.get(message_key(job_id))
        return json.loads(raw) if raw else None

    def _ended(self, job_id: str) -> None:
        """A run recorded its end: out of the running set, its message dropped."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.zrem(RUNNING, job_id)
        pipe.delete(message_key(job_id))
        pipe.execute()

    def beat(self, job_id: str) -> bool:
        """Renew the heartbeat of a running job; False once it is no longer running."""
        return bool(self._redis.eval(lua.BEAT, 1, _KEY.format(id=job_id), _now()))

    def progress(self, job_id: str, **counters: Any) -> None:
        self._update(job_id, progress=json.dumps(counters, default=str))

    def succeed(self, job_id: str, result: dict[str, Any]) -> None:
        self._update(
            job_id,
            clear=("run_open",),
            state="succeeded",
            finished_at=_now(),
            result=json.dumps(result, default=str),
        )
        self._ended(job_id)
        record = self._load(job_id)
        if record is not None:  # a redelivered run finished it: no longer dead
            self._redis.zrem(_DEAD.format(repo=record.repo), job_id)

    def fail(self, job_id: str, error: dict[str, Any], *, final: bool = True) -> None:
        """Record ``error``; a final one ends the job, else it waits queued for its retry
        (not running: nobody beats for it during the backoff)."""
        fields = {"error": json.dumps(error, default=str)}
        if final:
            fields |= {"state": "failed", "finished_at": _now()}
        else:
            fields |= {"state": "queued"}
        self._update(job_id, clear=("run_open",), **fields)
        if final:
            self._ended(job_id)
        else:  # waits for its retry; the message stays for a later run
            self._redis.zrem(RUNNING, job_id)
        if final:
            self._dead(job_id)

    def _dead(self, job_id: str) -> None:
        """List an ended-FAILED job in its repository's dead letters."""
        record = self._load(job_id)
        if record is not None and record.state == "failed":
            key = _DEAD.format(repo=record.repo)
            pipe = self._redis.pipeline()
            pipe.zadd(key, {job_id: datetime.now(UTC).timestamp()})
            pipe.expire(key, RETENTION_S)
            pipe.execute()

    def fail_if_open(self, job_id: str, error: dict[str, Any]) -> bool:
        """End a job that is still queued or running with ``error`` (a worker's main
        process reporting what its pool child could not: a hard time limit, a lost
        child); a job that already ended, or no job, is left alone."""
        ended = bool(
            self._redis.eval(
                lua.FAIL_IF_OPEN,
                2,
                _KEY.format(id=job_id),
                RUNNING,
                _now(),
                json.dumps(error, default=str),
            )
        )
        if ended:
            self._dead(job_id)
        return ended

    def _mark_lost(self, record: JobRecord) -> JobRecord:
        """Fail a running job whose heartbeat stopped (only if it is still that stale)."""
        since = record.heartbeat_at or record.started_at
        error = WorkerLost(
            f"the worker running this {record.kind} job stopped sending heartbeats"
            f" (last at {since.isoformat() if since else '?'})",
            hint="the worker died or hung; push again or re-run the job "
            "(a redelivered run may still finish it)",
            worker=record.worker,
        ).to_dict()
        expected = record.heartbeat_at.isoformat() if record.heartbeat_at else ""
        if self._redis.eval(
            lua.MARK_LOST, 1, _KEY.format(id=record.id), expected, _now(), json.dumps(error)
        ):
            self._dead(record.id)
        return self._load(record.id) or record

    def _load(self, job_id: str) -> JobRecord | None:
        raw = self._redis.hgetall(_KEY.format(id=job_id))
        return JobRecord.load(raw) if raw else None  # type: ignore[arg-type]

    def get(self, job_id: str) -> JobRecord:
        """The record; a running job with a stale heartbeat is marked lost first."""
        record = self._load(job_id)
        if record is None:
            raise NotFound(f"no job {job_id!r}", job_id=job_id)
        return self._checked(record)

    def _checked(self, record: JobRecord) -> JobRecord:
        return self._mark_lost(record) if record.is_lost(datetime.now(UTC)) else record

    def for_repo(self, repo: str, *, limit: int = 20) -> list[JobRecord]:
        """The repository's newest jobs, newest first."""
        return self._page(_REPO_INDEX.format(repo=repo), limit)

    def dead_letters(self, repo: str, *, limit: int = 20) -> list[JobRecord]:
        """The repository's jobs that ended FAILED (after their attempts), newest first."""
        return [r for r in self._page(_DEAD.format(repo=repo), limit) if r.state == "failed"]

    def superseded_by(self, job_id: str, *, scan: int = 50) -> JobRecord | None:
        """A job of the same kind, repository and ref, created after this one, that
        succeeded: the ref is already past this job's commit (among the ``scan`` newest)."""
        record = self.get(job_id)
        ref = record.params.get("ref")
        for other in self.for_repo(record.repo, limit=scan):
            if (
                other.id != record.id
                and other.kind == record.kind
                and other.params.get("ref") == ref
                and other.created_at > record.created_at
                and other.state == "succeeded"
            ):
                return other
        return None

    def _page(self, index: str, limit: int) -> list[JobRecord]:
        ids: list[bytes] = self._redis.zrevrange(  # type: ignore[assignment]
            index, 0, max(0, limit - 1)
        )
        pipe = self._redis.pipeline(transaction=False)  # one round trip for the page
        for raw_id in ids:
            pipe.hgetall(_KEY.format(id=raw_id.decode()))
        return [self._checked(JobRecord.load(raw)) for raw in pipe.execute() if raw]


def _now() -> str:
    return datetime.now(UTC).isoformat()

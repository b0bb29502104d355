"""What every task shares: job records, error translation, the repository, a lock."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis
from celery.exceptions import Ignore, Reject, Retry, SoftTimeLimitExceeded

from strata import locks
from strata.errors import DatabaseError, DatabaseUnavailable, NotFound, StrataError
from strata.git import Git, open_repository
from strata.jobs_recovery import MAX_LOST_RUNS
from strata.jobstore import JobRecord, JobStore, JobTimedOut, UnexpectedJobError, WorkerLost
from strata.locks import Every, Owner
from strata.registry import RepoRegistration
from strata_workers.context import WorkerContext, worker_context

# Transient database trouble is retried with backoff (always shorter than the
# visibility timeout, so Redis never redelivers a task that is still waiting). The
# wait is capped at 30 s so that a job runs again soon after Neo4j is back (a cap of
# 300 s left a job idle for minutes after a 30 s restart); 20 retries ride out an
# outage of several minutes (full jitter: 5 to 10 minutes in all).
RETRY: dict[str, Any] = {
    "autoretry_for": (DatabaseUnavailable,),
    "retry_backoff": 5,
    "retry_backoff_max": 30,
    "max_retries": 20,
}
# The job record's heartbeat and the repository lock's lease are renewed this
# often; a dead worker's job reads as lost after a few missed beats
# (strata.jobstore.lost_after) and its lock frees itself after LOCK_LEASE_S.
HEARTBEAT_S = 5.0
LOCK_LEASE_S = locks.LEASE_S
LOCK_WAIT_S = locks.WAIT_S
# A second delivery of a job another live process runs (the broker restored it on a
# reconnect while it ran) waits this often for that run to end.
DUPLICATE_POLL_S = 1.0

log = logging.getLogger(__name__)
_PASS_THROUGH = (Retry, Ignore, Reject)  # Celery's own control flow, not failures


def already_ended(jobs: JobStore, job_id: str, *, wait_s: float = LOCK_WAIT_S) -> JobRecord | None:
    """The record if this delivery must not run: the job already ended for good.

    At least once means a task can arrive twice: Redis restarted while it ran
    (its message restored to the queue at the reconnect, or never acknowledged
    and redelivered after the visibility timeout). A job that SUCCEEDED, or
    FAILED on anything but a lost worker, is not run again; one that another
    live process is running is waited for (up to ``wait_s``) and then judged.
    A job whose worker was lost runs again (that is the redelivery's purpose),
    unless it was given up (lost :data:`MAX_LOST_RUNS` times): then it stays failed.
    A reaper that sent a lost run's job again (strata.jobs_recovery) left the
    original message in the broker: it comes back at the visibility timeout and
    finds the job ended or running, and is skipped or waits here.
    """
    me = str(Owner.current())
    deadline = time.monotonic() + wait_s
    while True:
        record = jobs.get(job_id)
        if record.state == "succeeded":
            return record
        if record.state == "failed":
            lost = (record.error or {}).get("code") == WorkerLost.code
            given_up = record.lost >= MAX_LOST_RUNS and not record.run_open
            return None if lost and not given_up else record
        if record.state != "running" or record.owner in (None, me):
            return None
        owner = Owner.parse(record.owner or "")
        if owner is not None and owner.gone():  # its run died here: this delivery is the rerun
            return None
        if time.monotonic() > deadline:
            return None  # the lock still keeps two runs apart
        time.sleep(DUPLICATE_POLL_S)


@contextmanager
def tracked(task: Any, job_id: str) -> Iterator[WorkerContext]:
    """Run a job with a heartbeat; record every failure that is not a StrataError.

    StrataErrors are re-raised for the caller to record (it knows whether to
    retry); anything else ends the job FAILED with a typed error whose message
    holds no server detail (the worker log has the traceback).
    """
    ctx = worker_context(task.app.conf.strata_settings)
    ended = already_ended(ctx.jobs, job_id)
    if ended is not None:
        log.warning("job %s already %s: this delivery is skipped", job_id, ended.state)
        raise Ignore()  # acknowledged without running or recording anything
    lost = ctx.jobs.start(
        job_id,
        worker=f"{socket.gethostname()}:{os.getpid()}",
        heartbeat_s=HEARTBEAT_S,
        message=_message(task),
    )
    if lost >= MAX_LOST_RUNS:
        error = WorkerLost(
            f"the worker running this job died {lost} times; it is not run again",
            hint="check the worker's memory limit and log, then push again",
        )
        ctx.jobs.fail(job_id, error.to_dict())
        raise error
    beat = Every(HEARTBEAT_S, lambda: ctx.jobs.beat(job_id), name="strata-job-heartbeat")
    try:
        yield ctx
    except (StrataError, *_PASS_THROUGH):
        raise
    except SoftTimeLimitExceeded as exc:
        limit = ctx.settings.task_time_limit_s
        timed_out = JobTimedOut(
            f"the job ran past its time limit ({limit} s) and was stopped",
            hint="raise STRATA_TASK_TIME_LIMIT_S (and the visibility timeout with it)",
        )
        ctx.jobs.fail(job_id, timed_out.to_dict())
        raise timed_out from exc
    except Exception as exc:
        log.exception("job %s failed on an unexpected %s", job_id, type(exc).__name__)
        ctx.jobs.fail(job_id, unexpected(exc, job_id).to_dict())
        raise
    finally:
        beat.stop()


def _message(task: Any) -> dict[str, Any] | None:
    """What a reaper needs to send this delivery again: task name, queue, kwargs."""
    delivery = getattr(task.request, "delivery_info", None) or {}
    queue = delivery.get("routing_key")
    if not queue:  # run in-process (eager), not from a queue: nothing to send again
        return None
    return {"task": task.name, "queue": queue, "kwargs": dict(task.request.kwargs or {})}


# Neo4j ended a transaction at its client-set timeout: on a loaded machine, or a store
# just restarted with a cold page cache, a write batch can outlast it once; Neo4j itself
# says a new transaction should succeed. The job retries it like an unreachable Neo4j.
TX_TIMED_OUT = "Neo.ClientError.Transaction.TransactionTimedOut"


@contextmanager
def job_run(task: Any, job_id: str) -> Iterator[WorkerContext]:
    """A tracked job whose StrataErrors are recorded too (final, or before a retry)."""
    with tracked(task, job_id) as ctx:
        try:
            yield ctx
        except DatabaseUnavailable as exc:
            final = task.request.retries >= task.max_retries
            ctx.jobs.fail(job_id, public_error(exc), final=final)
            raise
        except DatabaseError as exc:
            if not str(exc.details.get("gql_status") or "").startswith(TX_TIMED_OUT):
                ctx.jobs.fail(job_id, public_error(exc))
                raise
            retry = DatabaseUnavailable(
                "a Neo4j transaction ran past its timeout; the job is retried",
                hint="if it keeps timing out, raise STRATA_NEO4J_QUERY_TIMEOUT_S",
            )
            final = task.request.retries >= task.max_retries
            ctx.jobs.fail(job_id, public_error(retry), final=final)
            raise retry from exc
        except StrataError as exc:
            ctx.jobs.fail(job_id, public_error(exc))
            raise


def unexpected(exc: BaseException, job_id: str) -> UnexpectedJobError:
    """What a client may see of an error Strata did not expect: its type, not its text
    (which can hold server paths, hosts or data)."""
    return UnexpectedJobError(
        f"the job failed on an unexpected {type(exc).__name__}",
        hint=f"the worker log has the details (job {job_id})",
    )


def public_error(exc: StrataError) -> dict[str, Any]:
    """``exc.to_dict()`` with this server's absolute paths cut to their last part."""
    out = exc.to_dict()
    for field in ("message", "hint"):
        if isinstance(out.get(field), str):
            out[field] = scrub_paths(out[field])
    if _has_paths(out.get("details")):
        del out["details"]  # structured details are for the log, not for clients
    return out


_ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?:[\w.@+-]+/)+[\w.@+-]*")


def scrub_paths(text: str) -> str:
    """Replace absolute paths that exist on this machine by ``<server>/<last part>``."""

    def cut(match: re.Match[str]) -> str:
        found = match.group(0).rstrip("/")
        parent = os.path.dirname(found)
        # It exists, or its folder does (a missing file named in an error); a
        # folder of the root alone says nothing (``/users/{id}`` is a route).
        if os.path.exists(found) or (parent != "/" and os.path.isdir(parent)):
            return f"<server>/{os.path.basename(found)}"
        return match.group(0)

    return _ABSOLUTE.sub(cut, text)


def _has_paths(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    text = json.dumps(value, default=str)
    return scrub_paths(text) != text


def registered_repository(
    ctx: WorkerContext, name: str, *, want: str | None = None
) -> tuple[RepoRegistration, Git]:
    """The registration and a readable git repository (its path, or a fetched mirror)
    that holds the commit ``want`` if one is given (else a typed ``commit_not_found``)."""
    registration = ctx.registry.get(name)
    if registration is None:
        raise NotFound(f"repository {name!r} is not registered")
    git = open_repository(
        registration.name,
        url=registration.url,
        path=registration.path,
        mirrors=ctx.settings.mirrors_dir,
        want=want,
    )
    return registration, git


@contextmanager
def repository_lock(ctx: WorkerContext, key: str, what: str) -> Iterator[None]:
    """One writer at a time per repository and layer (:mod:`strata.locks`, shared with
    the CLI's ``strata index``)."""
    with locks.repository_lock(ctx.redis, key, what, lease_s=LOCK_LEASE_S, wait_s=LOCK_WAIT_S):
        yield


def throttled_progress(
    ctx: WorkerContext, job_id: str, every_s: float, *, always: tuple[str, ...] = ("done",)
) -> Callable[[str, dict[str, Any]], None]:
    """A progress callback that writes the job record at most every ``every_s`` seconds
    (phases in ``always`` are written at once); only plain counters are kept."""
    last = 0.0

    def report(phase: str, counters: dict[str, Any]) -> None:
        nonlocal last
        now = time.monotonic()
        if phase in always or now - last >= every_s:
            last = now
            numbers = {k: v for k, v in counters.items() if isinstance(v, int | float | str)}
            try:
                ctx.jobs.progress(job_id, phase=phase, **numbers)
            except redis.RedisError:  # counters only: Redis away past its retries, the
                log.warning("progress of job %s not recorded", job_id)  # write goes on

    return report

"""A job whose worker vanished goes back to its queue, a bounded number of times.

A worker SIGKILLed or OOM-killed whole (main process and pool children) leaves
its job RUNNING with a heartbeat that stopped, and its task message
unacknowledged in Redis until the broker's visibility timeout (hours): nobody
is left to report or requeue it. So every live worker runs a reaper
(``strata_workers.reaper``) over the runs that started and have not ended
(:data:`strata.jobstore.RUNNING`). A run is *abandoned* when

- its heartbeat is older than :func:`strata.jobstore.lost_after` (any host), or
- it ran on this host and both its process and that process's parent (a prefork
  worker's main process) are provably gone: a worker killed whole, judged at
  once. A pool child killed under a living main process is left to Celery, which
  requeues the message itself (``task_reject_on_worker_lost``); or
- a reader already marked it FAILED ``worker_lost`` for its stale heartbeat;

and never while its process provably still runs on this host (a starved
process on a busy machine misses heartbeats without being dead).

An abandoned run is claimed atomically (the record must still be the run that
was judged, so two reapers or a run that came back never both act): it is sent
again with its own message (task, queue, kwargs, and the job id as task id) and
the job is QUEUED again, or, once its worker died :data:`MAX_LOST_RUNS` times
(an OOM on the same input, say), it ends FAILED for good in the dead letters.

The original message is still in the broker and comes back at the visibility
timeout; that delivery finds the job ended (succeeded, or given up) and is
skipped (``strata_workers.runner.already_ended``), so no job runs twice to a
different result.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from strata import jobs_scripts as lua
from strata.jobstore import (
    RETENTION_S,
    RUNNING,
    JobRecord,
    JobStore,
    WorkerLost,
    dead_key,
    job_key,
    message_key,
)
from strata.locks import Owner

# A job whose worker died this many times is failed instead of being run again.
MAX_LOST_RUNS = 2


def abandoned(record: JobRecord, now: datetime) -> bool:
    """Whether the record's open run has nobody left to finish or requeue it."""
    if not record.run_open:
        return False
    owner = Owner.parse(record.owner or "")
    if owner is not None and owner.alive():
        return False  # its process still lives here: slow (a busy machine), not dead
    if record.state == "failed":  # a reader marked it lost for its silent heartbeat
        return (record.error or {}).get("code") == WorkerLost.code
    if record.state != "running":
        return False
    if record.is_lost(now):
        return True
    supervisor = Owner.parse(record.supervisor or "")
    return owner is not None and supervisor is not None and owner.gone() and supervisor.gone()


def abandoned_runs(
    store: JobStore, queues: set[str], *, now: datetime | None = None
) -> list[JobRecord]:
    """The abandoned runs whose message goes to one of ``queues`` (one round trip
    for the records, which are small: messages are kept apart); ended runs still
    listed are dropped from the set."""
    client = store.client
    ids = [raw.decode() for raw in client.zrange(RUNNING, 0, -1)]  # type: ignore[union-attr]
    pipe = client.pipeline(transaction=False)
    for job_id in ids:
        pipe.hgetall(job_key(job_id))
    moment = now or datetime.now(UTC)
    found: list[JobRecord] = []
    for job_id, raw in zip(ids, pipe.execute(), strict=True):
        record = JobRecord.load(raw) if raw else None
        if record is None or not record.run_open:  # expired, or ended
            client.zrem(RUNNING, job_id)
            continue
        if record.queue in queues and abandoned(record, moment):
            found.append(record)
    return found


def requeue(store: JobStore, record: JobRecord) -> bool:
    """Claim the run and mark the job QUEUED again (call once its message is sent);
    False if the record changed since it was read (someone else acted)."""
    error = WorkerLost(
        f"the worker running this job vanished; it was queued again"
        f" (lost run {record.lost + 1} of {MAX_LOST_RUNS})",
        hint="nothing to do: another worker runs it",
        worker=record.worker,
    ).to_dict()
    return _claim(store, lua.REQUEUE, record, json.dumps(error))


def exhaust(store: JobStore, record: JobRecord) -> bool:
    """Claim the run and end the job FAILED for good (its worker died too often)."""
    error = WorkerLost(
        f"the worker running this job died {record.lost + 1} times; it is not run again",
        hint="check the worker's memory limit and log, then push again",
        worker=record.worker,
    ).to_dict()
    now = datetime.now(UTC)
    extra = (message_key(record.id),)
    args = (json.dumps(error), now.isoformat(), str(now.timestamp()), str(RETENTION_S))
    return _claim(store, lua.EXHAUST, record, *args, extra_keys=extra)


def _claim(
    store: JobStore, script: str, record: JobRecord, *args: Any, extra_keys: tuple[str, ...] = ()
) -> bool:
    expected = (record.state, _iso(record.heartbeat_at), record.owner or "")
    keys = (job_key(record.id), RUNNING, dead_key(record.repo), *extra_keys)
    return bool(store.client.eval(script, len(keys), *keys, *expected, *args))


def _iso(when: datetime | None) -> str:
    return when.isoformat() if when else ""

"""Every live worker hands the jobs of vanished workers back to the queue.

The rules (what counts as abandoned, the atomic claim, the bound on lost runs)
are in :mod:`strata.jobs_recovery`; this is the worker's side: a daemon thread
in the worker's main process that sweeps every :data:`SWEEP_EVERY_S` and sends
a claimed job's own message again, to the queues this worker consumes (so
somebody is there to take it). It starts when the worker is ready and stops at
its shutdown; a sweep that fails (Redis away) is retried at the next.
"""

from __future__ import annotations

import logging
from typing import Any

import redis

from strata import jobs_recovery
from strata.jobstore import JobRecord, JobStore, redis_client
from strata.locks import Every
from strata_workers.runner import HEARTBEAT_S

SWEEP_EVERY_S = HEARTBEAT_S

log = logging.getLogger(__name__)


class Reaper:
    """Sweeps for abandoned runs of ``queues`` and sends their jobs again through ``app``."""

    def __init__(self, app: Any, queues: set[str]) -> None:
        self._app = app
        self._queues = queues
        # Its own client: the main process's, not a pool child's (forked before this).
        self._jobs = JobStore(redis_client(app.conf.strata_settings.redis_url))
        self._every: Every | None = None

    def start(self) -> None:
        self._every = Every(SWEEP_EVERY_S, self.sweep, name="strata-job-reaper")

    def stop(self) -> None:
        if self._every is not None:
            self._every.stop()
            self._every = None
        self._jobs.client.close()

    def sweep(self) -> list[str]:
        """One pass: the ids of the jobs sent again or given up."""
        acted: list[str] = []
        for record in jobs_recovery.abandoned_runs(self._jobs, self._queues):
            if self._recover(record):
                acted.append(record.id)
        return acted

    def _recover(self, record: JobRecord) -> bool:
        if record.lost + 1 >= jobs_recovery.MAX_LOST_RUNS:
            given_up = jobs_recovery.exhaust(self._jobs, record)
            if given_up:
                log.warning("job %s: its worker died %d times, failed", record.id, record.lost + 1)
            return given_up
        message = self._jobs.message(record.id) or {}
        # Sent before the claim: should the claim lose (another reaper, or the run
        # came back), the extra delivery finds the job running or ended and skips;
        # a send that fails leaves the run unclaimed for the next sweep.
        try:
            self._app.send_task(
                message["task"],
                kwargs=message["kwargs"],
                queue=message["queue"],
                task_id=record.id,
            )
        except (KeyError, TypeError):
            log.error("job %s: its recorded message cannot be sent again", record.id)
            return jobs_recovery.exhaust(self._jobs, record)
        except (redis.RedisError, OSError) as exc:
            log.warning("job %s: could not send it again (%s), next sweep", record.id, exc)
            return False
        claimed = jobs_recovery.requeue(self._jobs, record)
        log.warning(
            "job %s: worker %s vanished, %s",
            record.id,
            record.worker,
            "queued again" if claimed else "already handled elsewhere",
        )
        return claimed


_reaper: Reaper | None = None


def start(consumer: Any) -> None:
    """Start this process's reaper over the queues ``consumer`` takes tasks from."""
    global _reaper  # noqa: PLW0603 - one reaper per worker main process, by design
    if _reaper is not None:
        return
    queues = {queue.name for queue in consumer.task_consumer.queues}
    _reaper = Reaper(consumer.app, queues)
    _reaper.start()


def stop() -> None:
    global _reaper  # noqa: PLW0603
    if _reaper is not None:
        _reaper.stop()
        _reaper = None

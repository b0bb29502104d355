"""Job records for failures a task cannot record itself.

A hard time limit or a killed pool child ends a task without running any of
its code: only the worker's main process learns of it, through Celery's
``task_failure`` signal. This receiver ends the job FAILED with a typed error,
unless the task already recorded its end (the signal also fires in the pool
child after an ordinary exception, which :mod:`.runner` has recorded).

The worker's main process also runs the job reaper (:mod:`.reaper`) from its
ready signal to its shutdown.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.exceptions import TimeLimitExceeded, WorkerLostError
from celery.signals import task_failure, worker_process_shutdown, worker_ready, worker_shutdown

from strata.errors import StrataError
from strata.jobstore import JobTimedOut, WorkerLost
from strata_workers.context import worker_context
from strata_workers.runner import public_error, unexpected

log = logging.getLogger(__name__)


def describe(exception: BaseException | None, job_id: str, *, limit_s: int) -> dict[str, Any]:
    """The client-facing error for a task that ended on ``exception``."""
    if isinstance(exception, TimeLimitExceeded):
        return JobTimedOut(
            f"the job ran past its hard time limit ({limit_s} s) and its process was killed",
            hint="raise STRATA_TASK_TIME_LIMIT_S (and the visibility timeout with it)",
        ).to_dict()
    if isinstance(exception, WorkerLostError):
        return WorkerLost(
            "the worker process running this job exited before it ended (killed, or out of memory)",
            hint="check the worker's memory limit and log, then push again",
        ).to_dict()
    if isinstance(exception, StrataError):
        return public_error(exception)
    return unexpected(exception or RuntimeError(), job_id).to_dict()


def _on_failure(
    sender: Any = None,
    task_id: str | None = None,
    exception: BaseException | None = None,
    **_: Any,
) -> None:
    name = getattr(sender, "name", "")
    if not task_id or not name.startswith("strata."):
        return
    try:
        settings = sender.app.conf.strata_settings
        error = describe(exception, task_id, limit_s=settings.task_time_limit_s)
        if worker_context(settings).jobs.fail_if_open(task_id, error):
            log.warning("job %s ended by %s: %s", task_id, type(exception).__name__, error)
    except Exception:
        log.exception("could not record the failure of job %s", task_id)


def _flush_caches(**_: Any) -> None:
    """A pool child that is shut down finishes its pending extract-cache write."""
    from strata_workers import context

    built = context.current_context()
    if built is not None and "code" in built.__dict__:
        built.code.cache.flush()


def _start_reaper(sender: Any = None, **_: Any) -> None:
    """The worker's main process sends vanished workers' jobs again (strata_workers.reaper)."""
    from strata_workers import reaper

    try:
        reaper.start(sender)
    except Exception:  # a worker without a reaper still runs its tasks
        log.exception("the job reaper did not start")


def _stop_reaper(**_: Any) -> None:
    from strata_workers import reaper

    reaper.stop()


def connect() -> None:
    """Subscribe once per process (Celery signals deduplicate by receiver)."""
    task_failure.connect(_on_failure, weak=False)
    worker_process_shutdown.connect(_flush_caches, weak=False)
    worker_ready.connect(_start_reaper, weak=False)
    worker_shutdown.connect(_stop_reaper, weak=False)

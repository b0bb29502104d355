"""Entry point: ``celery -A strata_workers.main worker -Q code``.

This is the one place the worker process reads its settings.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from celery.signals import celeryd_after_setup, worker_ready, worker_shutdown

from strata import logs
from strata.settings import load_settings
from strata_workers.app import create_celery
from strata_workers.priority import background_nice

settings = load_settings()
logs.configure(level=settings.log_level, json=settings.log_json)
app = create_celery(settings)


def _ready_file() -> Path | None:
    value = os.environ.get("STRATA_WORKER_READY_FILE")
    return Path(value) if value else None


@celeryd_after_setup.connect
def _lower_background_priority(instance: Any = None, **_: object) -> None:
    """Before the pool starts (its processes inherit the priority)."""
    consumed = set(instance.app.amqp.queues.consume_from) if instance is not None else set()
    background = {settings.queue_knowledge, settings.queue_trace}
    lower = background_nice(consumed, background, settings.background_nice)
    if lower:
        os.nice(lower)


@worker_ready.connect
def _mark_ready(**_: object) -> None:
    """Tell `strata up` that this worker consumes its queue."""
    path = _ready_file()
    if path is not None:
        path.write_text(str(os.getpid()))


@worker_shutdown.connect
def _unmark_ready(**_: object) -> None:
    path = _ready_file()
    if path is not None:
        path.unlink(missing_ok=True)

"""The command line of one Celery worker process, shared by the dev stack, tests and benches.

Like the API (:mod:`strata.devstack.api`), a worker runs as its own process
(``celery -A strata_workers.main worker``); the core builds the command line and
never imports Celery. A worker touches ``STRATA_WORKER_READY_FILE`` once it is
ready to take tasks.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

READY_FILE_ENV = "STRATA_WORKER_READY_FILE"


def worker_command(
    queues: Sequence[str], name: str, *, concurrency: int = 1, pool: str | None = None
) -> list[str]:
    """``celery worker`` on ``queues`` as node ``name@<host>`` (no mingle, no gossip)."""
    argv = [sys.executable, "-m", "celery", "-A", "strata_workers.main", "worker"]
    argv += ["-Q", ",".join(queues), "-n", f"{name}@%h"]
    if pool is not None:
        argv += ["--pool", pool]
    argv += ["--concurrency", str(concurrency), "--loglevel", "INFO"]
    argv += ["--without-mingle", "--without-gossip"]
    return argv

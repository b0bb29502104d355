"""One writer at a time per repository and layer: a Redis lease every writer takes.

The code worker and ``strata index`` (the CLI) both write a repository's code
facts; two writers at once would both see "nothing here yet" and open every
fact twice. So both take the same lock, ``strata:lock:code:<repo>:<ref>``. It is
a lease renewed by a daemon thread while the work runs, so a killed writer's
lock frees itself within the lease instead of blocking the next one for long.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis
from redis.exceptions import LockError

from strata.errors import DatabaseUnavailable

# Renewed every LEASE_S / 3: a writer starved of CPU for a whole lease (a busy
# machine, a long call that holds the GIL) must not lose its lock mid-write.
LEASE_S = 90
WAIT_S = 600

log = logging.getLogger(__name__)


def lock_key(layer: str, repo: str, ref: str) -> str:
    """The lock of one layer of one repository's ref (``code:<repo>:<ref>``)."""
    return f"{layer}:{repo}:{ref}"


class Every:
    """Call ``beat`` every ``seconds`` on a daemon thread until :meth:`stop`.

    Daemon on purpose: a heartbeat must die with its process, that is the signal.
    """

    def __init__(self, seconds: float, beat: Callable[[], object], *, name: str) -> None:
        self._stop = threading.Event()
        self._seconds = seconds
        self._beat = beat
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._seconds):
            try:
                self._beat()
            except Exception:  # a missed beat is retried at the next one
                log.warning("%s failed", self._thread.name, exc_info=True)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._seconds + 5)


@contextmanager
def repository_lock(
    client: redis.Redis, key: str, what: str, *, lease_s: float = LEASE_S, wait_s: float = WAIT_S
) -> Iterator[None]:
    """Hold ``strata:lock:<key>`` while the body runs (waits up to ``wait_s``)."""
    lock = client.lock(
        f"strata:lock:{key}",
        timeout=lease_s,
        blocking_timeout=wait_s,
        thread_local=False,  # renewed from the lease thread
    )
    if not lock.acquire():
        raise DatabaseUnavailable(f"another {what} is still running")
    lease = Every(lease_s / 3, lock.reacquire, name="strata-lock-lease")
    try:
        yield
    finally:
        lease.stop()
        with contextlib.suppress(LockError):  # the lease ran out: another run owns it now
            lock.release()

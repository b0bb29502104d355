"""One writer at a time per repository and layer: a Redis lease every writer takes.

The code worker and ``strata index`` (the CLI) both write a repository's code
facts; two writers at once would both see "nothing here yet" and open every
fact twice. So both take the same lock, ``strata:lock:code:<repo>:<ref>``. It is
a lease renewed by a daemon thread while the work runs, so a killed writer's
lock frees itself within the lease instead of blocking the next one for long.

The lock's value names its holder (:class:`Owner`: host, pid namespace, pid and
the process's start time). A writer waiting for a lock whose holder is provably
gone (same host and pid namespace, and that process no longer exists) takes it
over at once instead of waiting out the lease: a SIGKILLed pool child or CLI
costs its successor seconds, not ``LEASE_S``. A holder on another host is never
judged, only its lease can free the lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import redis
from redis.exceptions import LockError

from strata.errors import DatabaseUnavailable

# Renewed every LEASE_S / 3: a writer starved of CPU for a whole lease (a busy
# machine, a long call that holds the GIL) must not lose its lock mid-write.
LEASE_S = 90
WAIT_S = 600
# How often a waiting writer retries (and looks whether the holder still lives).
POLL_S = 0.25

log = logging.getLogger(__name__)

# Delete the lock only if it still holds the value the caller judged dead.
_TAKE_OVER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def lock_key(layer: str, repo: str, ref: str) -> str:
    """The lock of one layer of one repository's ref (``code:<repo>:<ref>``)."""
    return f"{layer}:{repo}:{ref}"


@cache
def host_id() -> str:
    """This host and pid namespace: a pid means the same process only within it."""
    try:
        namespace = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        namespace = "?"
    return f"{socket.gethostname()}/{namespace}"


def process_start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (None: no such process or a
    zombie, which has finished running)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after "(comm)", which may hold spaces
    if fields[0] in ("Z", "X"):
        return None
    return fields[19]


@dataclass(frozen=True, slots=True)
class Owner:
    """Who holds a lock or runs a job: ``host/pidns:pid:start``."""

    host: str
    pid: int
    start: str

    @classmethod
    def current(cls) -> Owner:
        return cls.of(os.getpid())

    @classmethod
    def of(cls, pid: int) -> Owner:
        """The process ``pid`` of this host (its start time ``?`` if it is not running)."""
        return cls(host_id(), pid, process_start_time(pid) or "?")

    @classmethod
    def parse(cls, text: str) -> Owner | None:
        host, sep, rest = text.rpartition(":")  # host:pid:start, the host may hold ':'
        host, sep2, pid = host.rpartition(":")
        if not (sep and sep2 and pid.isdigit()):
            return None
        return cls(host, int(pid), rest)

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}"

    def gone(self) -> bool:
        """Provably dead: it ran on this host and namespace, and no longer does.

        Unknown (another host, no /proc) is never gone: only a lease or a
        heartbeat can tell then.
        """
        if self.host != host_id() or self.start == "?" or not Path("/proc/self/stat").exists():
            return False
        return process_start_time(self.pid) != self.start

    def alive(self) -> bool:
        """Provably running: on this host and namespace, the same process still exists
        (slow or starved, perhaps, but not dead)."""
        if self.host != host_id() or self.start == "?":
            return False
        return process_start_time(self.pid) == self.start


def owner_of_token(token: bytes | str | None) -> Owner | None:
    """The holder a lock value names (``<owner>|<uuid>``), if it names one."""
    if token is None:
        return None
    text = token.decode() if isinstance(token, bytes) else token
    head, sep, _ = text.rpartition("|")
    return Owner.parse(head) if sep else None


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
            except Exception:  # a missed beat (Redis restarting, say) is retried at the next
                log.warning("%s failed", self._thread.name, exc_info=True)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._seconds + 5)


def _acquire(client: redis.Redis, lock: redis.lock.Lock, name: str, wait_s: float) -> bool:
    """Take the lock within ``wait_s``, taking it over from a holder that is gone."""
    token = f"{Owner.current()}|{uuid.uuid4().hex}"
    deadline = time.monotonic() + wait_s
    while True:
        if lock.acquire(blocking=False, token=token):
            return True
        held = client.get(name)
        holder = owner_of_token(held)
        if holder is not None and holder.gone():
            if client.eval(_TAKE_OVER, 1, name, held):  # type: ignore[arg-type]
                log.warning("took over %s from %s, which is gone", name, holder)
            continue
        if time.monotonic() + POLL_S > deadline:
            return False
        time.sleep(POLL_S)


@contextmanager
def repository_lock(
    client: redis.Redis, key: str, what: str, *, lease_s: float = LEASE_S, wait_s: float = WAIT_S
) -> Iterator[None]:
    """Hold ``strata:lock:<key>`` while the body runs (waits up to ``wait_s``)."""
    name = f"strata:lock:{key}"
    lock = client.lock(name, timeout=lease_s, thread_local=False)  # renewed from the lease thread
    if not _acquire(client, lock, name, wait_s):
        raise DatabaseUnavailable(f"another {what} is still running")
    lease = Every(lease_s / 3, lock.reacquire, name="strata-lock-lease")
    try:
        yield
    finally:
        lease.stop()
        with contextlib.suppress(LockError, redis.RedisError):  # the lease ran out, or
            lock.release()  # Redis is away: the lease frees it (another run may own it now)

"""The caller's side: find the daemon for these settings (start one), ask, follow.

Starting is serialised by a lock file per daemon, so two `strata index` runs
that find none start one between them. A socket left by a daemon that died is
replaced. Starting a daemon stops the ones the same settings started with
older code (a changed checkout), so they do not hold their memory until idle.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from strata.code.result import IndexResult, Progress
from strata.devstack.procs import pid_alive
from strata.errors import StrataError
from strata.indexd.protocol import (
    Address,
    IndexRequest,
    address,
    log_path,
    raise_error,
    receive,
    runtime_dir,
    send,
    settings_hash,
)
from strata.settings import Settings

START_TIMEOUT_S = 60.0  # the daemon imports the indexer (~1 s) before it listens
LOG_KEEP_BYTES = 5 * 2**20  # the daemons' log is cut to its tail beyond this at a start
STALE_LOCK_S = 86_400.0  # a lock file with no socket beside it for a day is removed
NO_DAEMON_HINT = "`strata index --no-daemon` indexes in this process"


def index(
    settings: Settings, request: IndexRequest, progress: Progress
) -> list[IndexResult] | None:
    """Run ``request`` in the daemon for ``settings`` (started if none answers); None
    if the daemon is busy with another repository or ref (index it in this process)."""
    where = address(settings)
    conn = _connect(where.socket) or _start(settings, where)
    with conn, conn.makefile("rwb") as stream:
        send(stream, request.to_message())
        while True:
            message = receive(stream)
            if message is None:
                raise StrataError(
                    "the index daemon stopped before it answered",
                    hint=f"its log: {log_path(settings)}; {NO_DAEMON_HINT}",
                )
            if "progress" in message:
                phase, counters = message["progress"]
                progress(str(phase), dict(counters))
            elif "error" in message:
                raise_error(message["error"])
            elif "busy" in message:
                return None
            elif "results" in message:
                return [IndexResult.from_dict(r) for r in message["results"]]


def status(settings: Settings, *, timeout_s: float = 5.0) -> dict[str, Any] | None:
    """The running daemon's status for these settings and code (None: none runs)."""
    conn = _connect(address(settings).socket)
    if conn is None:
        return None
    with conn, conn.makefile("rwb") as stream:
        conn.settimeout(timeout_s)
        send(stream, {"op": "status"})
        message = receive(stream)
    return None if message is None else message.get("status")


def stop_all(settings: Settings, *, wait_s: float = 5.0) -> list[int]:
    """Stop every daemon working for this data folder (`strata down`); the pids.

    A daemon in the middle of a run ends it first; one still running after
    ``wait_s`` gets SIGTERM."""
    daemons = running(settings)
    for daemon in daemons:
        _ask_to_stop(Path(daemon["socket"]))
    deadline = time.monotonic() + wait_s
    for daemon in daemons:
        while pid_alive(daemon["pid"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(daemon["pid"]):
            with suppress(OSError):
                os.kill(daemon["pid"], signal.SIGTERM)
    return [d["pid"] for d in daemons]


def running(settings: Settings) -> list[dict[str, Any]]:
    """The info of the daemons alive for this data folder (pid, started, key)."""
    var_dir = str(settings.var_dir.resolve())
    return [d for d in _daemons() if d.get("var_dir") == var_dir and pid_alive(d["pid"])]


def _start(settings: Settings, where: Address) -> socket.socket:
    """Start the daemon at ``where`` (unless another caller just did) and connect."""
    with _locked(where.lock):
        conn = _connect(where.socket)
        if conn is not None:
            return conn
        where.socket.unlink(missing_ok=True)  # a dead daemon's
        _stop_older(settings, keep=where.key)
        log = log_path(settings)
        log.parent.mkdir(parents=True, exist_ok=True)
        _trim(log)
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "strata.indexd", where.key],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C of this run does not reach it
                close_fds=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            conn = _connect(where.socket)
            if conn is not None:
                return conn
            code = proc.poll()
            if code is not None or time.monotonic() > deadline:
                if code is None:
                    proc.kill()
                raise StrataError(
                    "the index daemon did not start"
                    + (f" (exit status {code})" if code is not None else " in time"),
                    hint=f"its log: {log}: {_tail(log)}; {NO_DAEMON_HINT}",
                )
            time.sleep(0.05)


def _connect(path: Path) -> socket.socket | None:
    """A connection to the daemon listening at ``path``, or None."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except OSError:
        sock.close()
        raise
    return sock


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _daemons() -> list[dict[str, Any]]:
    """The info of every daemon that says it listens in the runtime folder."""
    found = []
    for info in sorted(runtime_dir().glob("indexd-*.json")):
        try:
            data = json.loads(info.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("pid"), int):
            data["socket"] = str(info.with_suffix(".sock"))
            found.append(data)
    return found


def _stop_older(settings: Settings, *, keep: str) -> None:
    """Ask the daemons of these same settings (another code fingerprint) to stop, and
    remove the lock files of daemons long gone (one per code fingerprint ever run)."""
    mine = settings_hash(settings)
    for daemon in _daemons():
        if daemon.get("settings") == mine and daemon.get("key") != keep:
            _ask_to_stop(Path(daemon["socket"]))
    old = time.time() - STALE_LOCK_S
    for lock in runtime_dir().glob("indexd-*.lock"):
        with suppress(OSError):
            if not lock.with_suffix(".sock").exists() and lock.stat().st_mtime < old:
                lock.unlink()


def _ask_to_stop(path: Path) -> None:
    """Send ``stop`` and leave (a busy daemon reads it once its run ends)."""
    conn = _connect(path)
    if conn is None:
        return
    with conn, suppress(OSError):
        conn.sendall(json.dumps({"op": "stop"}).encode() + b"\n")


def _trim(log: Path) -> None:
    """Keep the log's last LOG_KEEP_BYTES."""
    with suppress(OSError):
        if log.stat().st_size > LOG_KEEP_BYTES:
            with log.open("rb") as handle:
                handle.seek(-LOG_KEEP_BYTES, os.SEEK_END)
                tail = handle.read()
            log.write_bytes(tail)


def _tail(log: Path, lines: int = 5) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:]) or "(empty)"

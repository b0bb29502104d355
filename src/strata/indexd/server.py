"""The index daemon: one CodeService kept between `strata index` runs.

It serves one request at a time (the service is not for concurrent use; a
second caller waits in the socket's backlog, as it would wait for the code
lock). After each index it settles the service as the code worker does after a
push, so the next run starts on warm memos. Any failure answers the caller
with the error and drops the kept state: the next run starts from the extract
cache on disk, like a new CLI process. Neo4j is connected on the first request
and again after a failure, so a daemon outlives a database restart.

The caller going away (an interrupted `strata index`) stops the run at its next
progress point (the parse's start, each write batch), as an interrupt would.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

import structlog

from strata.code.result import IndexResult
from strata.errors import StrataError, ValidationError
from strata.indexd.protocol import (
    MAX_REQUEST_BYTES,
    Address,
    IndexRequest,
    Stream,
    error_message,
    parse_since,
    receive,
    send,
    settings_hash,
)
from strata.settings import Settings

log = structlog.get_logger(component="index-daemon")


class CallerGone(Exception):
    """The caller closed its end while its run went on."""


class IndexDaemon:
    """Listens at an :class:`Address`, indexes what callers ask, exits when idle."""

    def __init__(self, settings: Settings, where: Address, *, idle_s: float) -> None:
        self.settings = settings
        self.where = where
        self.idle_s = idle_s
        self.started = datetime.now(UTC)
        self.last_request = time.monotonic()
        self.requests = 0
        self._service: Any = None  # strata.code.service.CodeService, built on first use
        self._gateway: Any = None
        self._inode: int | None = None

    # -- the loop -------------------------------------------------------------------

    def serve(self) -> None:
        """Listen, answer requests one by one, and return once idle or told to stop."""
        signal.signal(signal.SIGTERM, _exit_on_signal)
        listener = self._listen()
        log.info("indexd.listening", socket=str(self.where.socket), idle_s=self.idle_s)
        try:
            while True:
                listener.settimeout(self.idle_s)
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    log.info("indexd.idle_exit", idle_s=self.idle_s, requests=self.requests)
                    return
                conn.settimeout(None)
                after: tuple[str, str] | str | None = None
                try:
                    with conn, conn.makefile("rwb") as stream:
                        after = self._answer(stream)
                except (OSError, ValueError):  # the last answer's flush: the caller left
                    log.info("indexd.caller_left_before_answer")
                except Exception:  # a daemon outlives any one request
                    log.exception("indexd.request_failed")
                    self._drop()
                self.last_request = time.monotonic()
                if after == "stop":
                    log.info("indexd.stopped", requests=self.requests)
                    return
                if after is not None:
                    self._settle(*after)
        finally:
            self._unlisten(listener)
            self._drop()

    def _listen(self) -> socket.socket:
        """Bind a fresh socket, then move it to the address (callers never see a socket
        that does not listen yet), and write the info file beside it."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        fresh = self.where.socket.with_name(f"{self.where.socket.name}.{os.getpid()}")
        fresh.unlink(missing_ok=True)
        sock.bind(str(fresh))
        sock.listen(16)
        os.replace(fresh, self.where.socket)
        self._inode = self.where.socket.stat().st_ino
        info = {
            "pid": os.getpid(),
            "key": self.where.key,
            "var_dir": str(self.settings.var_dir.resolve()),
            "settings": settings_hash(self.settings),
            "started": self.started.isoformat(),
        }
        staged = self.where.info.with_name(f"{self.where.info.name}.{os.getpid()}")
        staged.write_text(json.dumps(info))
        os.replace(staged, self.where.info)
        return sock

    def _unlisten(self, sock: socket.socket) -> None:
        """Close, and remove the socket and info file if they are still this daemon's."""
        sock.close()
        try:
            if self.where.socket.stat().st_ino == self._inode:
                self.where.socket.unlink()
        except OSError:
            pass
        try:
            if json.loads(self.where.info.read_text()).get("pid") == os.getpid():
                self.where.info.unlink()
        except (OSError, ValueError):
            pass

    # -- one request ----------------------------------------------------------------

    def _answer(self, stream: Stream) -> tuple[str, str] | str | None:
        """Read one request and answer it; what to do once the caller is answered:
        ``"stop"``, a (repo, ref) to settle, or None."""
        try:
            message = receive(stream, MAX_REQUEST_BYTES)
            if message is None:
                return None
            op = message.get("op")
            if op == "status":
                _reply(stream, {"status": self.status()})
                return None
            if op == "stop":
                _reply(stream, {"stopping": os.getpid()})
                return "stop"
            if op != "index":
                raise ValidationError(f"unknown request {op!r}", hint="index, status or stop")
            request = IndexRequest.from_message(message)
        except StrataError as exc:
            _reply(stream, error_message(exc))
            return None
        self.requests += 1
        return self._index(stream, request)

    def _index(self, stream: Stream, request: IndexRequest) -> tuple[str, str] | None:
        caller = _Caller(stream)
        started = time.perf_counter()
        try:
            results = self._run(request, caller)
        except CallerGone:
            log.warning("indexd.caller_gone", repo=request.repo, ref=request.ref)
            self._drop()
            return None
        except StrataError as exc:
            log.warning("indexd.failed", repo=request.repo, error=exc.message)
            self._drop()
            caller.send(error_message(exc))
            return None
        except Exception as exc:  # answered, logged with its trace, and the state dropped
            log.exception("indexd.crashed", repo=request.repo)
            self._drop()
            failure = StrataError(
                f"the index daemon failed: {type(exc).__name__}: {exc}",
                hint=f"its log: {self.settings.var_dir / 'log' / 'indexd.log'}; "
                "`strata index --no-daemon` indexes in the calling process",
            )
            caller.send(error_message(failure))
            return None
        caller.send({"results": [r.as_full_dict() for r in results]})
        log.info(
            "indexd.indexed",
            repo=request.repo,
            ref=request.ref,
            modes=[r.mode for r in results],
            seconds=round(time.perf_counter() - started, 3),
        )
        return request.repo, request.ref

    def _run(self, request: IndexRequest, caller: _Caller) -> list[IndexResult]:
        service = self._ensure_service()
        return list(
            service.index_path(
                Path(request.path),
                repo=request.repo,
                ref=request.ref,
                rev=request.rev,
                since=parse_since(request.since),
                commits=request.commits,
                progress=caller.progress,
            )
        )

    # -- the kept state -------------------------------------------------------------

    def _ensure_service(self) -> Any:
        if self._service is None:
            from strata.code.service import CodeService
            from strata.graph.gateway import Gateway
            from strata.ontology import load_ontology

            self._gateway = Gateway.connect(self.settings)
            self._service = CodeService(
                self.settings, self._gateway, load_ontology(self.settings.ontology_dir)
            )
        return self._service

    def _settle(self, repo: str, ref: str) -> None:
        """What the code worker does after a push: warm the next run's memos."""
        if self._service is None:
            return
        try:
            self._service.settle(repo, ref)
        except Exception:  # a cold memo costs the next run time, nothing else
            log.exception("indexd.settle_failed", repo=repo)

    def _drop(self) -> None:
        """Forget the kept state and close the database connection."""
        service, gateway = self._service, self._gateway
        self._service = self._gateway = None
        if service is not None:
            try:
                service.cache.flush()
            except Exception:
                log.exception("indexd.flush_failed")
        if gateway is not None:
            gateway.close()

    def status(self) -> dict[str, Any]:
        """What ``strata`` and the bench read: pid, age, idleness, memory."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return {
            "pid": os.getpid(),
            "started": self.started.isoformat(),
            "idle_s": round(time.monotonic() - self.last_request, 3),
            "idle_limit_s": self.idle_s,
            "requests": self.requests,
            "rss_mb": round(_current_rss_bytes() / 2**20, 1),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "warm": self._service is not None,
        }


class _Caller:
    """The caller's end: progress goes there while it listens."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.gone = False

    def progress(self, phase: str, counters: dict[str, Any]) -> None:
        """Forward one progress event; raise CallerGone (in the daemon's main thread)
        once the caller has gone."""
        if not self.gone:
            try:
                send(self.stream, {"progress": [phase, counters]})
            except (OSError, ValueError):
                self.gone = True
        if self.gone and threading.current_thread() is threading.main_thread():
            raise CallerGone

    def send(self, message: dict[str, Any]) -> None:
        _reply(self.stream, message)


def _reply(stream: Stream, message: dict[str, Any]) -> None:
    try:
        send(stream, message)
    except (OSError, ValueError):
        log.info("indexd.caller_left_before_answer")


def _current_rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)

"""The index daemon: one CodeService kept between `strata index` runs.

It runs one index at a time, in its main thread (the service is not for
concurrent use); an acceptor thread queues a request for the repository and ref
being indexed and answers ``busy`` to one for another (see :meth:`IndexDaemon.serve`).
After each index it settles the service as the code worker does after a
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
import queue
import resource
import signal
import socket
import threading
import time
from contextlib import suppress
from datetime import UTC, datetime
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
    index_with,
    log_path,
    receive,
    send,
    settings_hash,
)
from strata.settings import Settings

log = structlog.get_logger(component="index-daemon")

REQUEST_READ_TIMEOUT_S = 5.0


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
        # Index requests waiting for this thread; None asks it to stop.
        self._queue: queue.Queue[tuple[socket.socket, Stream, IndexRequest] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._busy: tuple[str, str] | None = None  # the repository and ref being indexed
        self._closing = False

    # -- the loop -------------------------------------------------------------------

    def serve(self) -> None:
        """Listen, run the index requests one by one, return once idle or told to stop.

        An acceptor thread reads every request as it comes: it answers ``status`` and
        ``stop`` at once, queues an index of the repository and ref being indexed
        (it would wait for that ref's code lock anyway), and answers ``busy`` to an
        index of another one (its caller indexes in its own process, in parallel,
        as it did before the daemon). This thread runs the queued indexes."""
        signal.signal(signal.SIGTERM, _exit_on_signal)
        listener = self._listen()
        acceptor = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        acceptor.start()
        log.info("indexd.listening", socket=str(self.where.socket), idle_s=self.idle_s)
        try:
            while True:
                try:
                    item = self._queue.get(timeout=self.idle_s)
                except queue.Empty:
                    with self._lock:
                        if self._queue.empty() and self._busy is None:
                            self._closing = True
                            log.info("indexd.idle_exit", idle_s=self.idle_s, requests=self.requests)
                            return
                    continue
                if item is None:  # stop
                    log.info("indexd.stopped", requests=self.requests)
                    return
                self._serve_one(*item)
        finally:
            with self._lock:
                self._closing = True
            self._turn_away_queued()
            self._unlisten(listener)
            self._drop()

    def _serve_one(self, conn: socket.socket, stream: Stream, request: IndexRequest) -> None:
        """Run one queued index, answer it, then settle (or free the daemon)."""
        after = None
        try:
            after = self._index(stream, request)
        except Exception:  # a daemon outlives any one request
            log.exception("indexd.request_failed")
            self._drop()
        finally:
            _close(conn, stream)  # its flush failing means only that the caller left
        if after is not None:
            self._settle(*after)
        self.last_request = time.monotonic()
        with self._lock:
            if self._queue.empty():
                self._busy = None

    def _accept(self, listener: socket.socket) -> None:
        """The acceptor thread: read each request, answer or queue it."""
        listener.settimeout(0.5)
        while not self._closing:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # the listener closed
            try:
                self._take(conn)
            except Exception:
                log.exception("indexd.accept_failed")
                conn.close()

    def _take(self, conn: socket.socket) -> None:
        conn.settimeout(REQUEST_READ_TIMEOUT_S)  # a request is one short line
        stream = conn.makefile("rwb")
        try:
            message = receive(stream, MAX_REQUEST_BYTES)
            if message is None:
                raise ValidationError("no request")
            op = message.get("op")
            if op == "index":
                request = IndexRequest.from_message(message)
                conn.settimeout(None)
                with self._lock:
                    queued = not self._closing and self._busy in (None, request.slot)
                    if queued:
                        self._busy = request.slot
                        self.requests += 1
                        self._queue.put((conn, stream, request))
                    busy = self._busy
                if queued:
                    return
                _reply(stream, {"busy": {"repo": busy[0], "ref": busy[1]} if busy else {}})
            elif op == "status":
                _reply(stream, {"status": self.status()})
            elif op == "stop":
                _reply(stream, {"stopping": os.getpid()})
                self._queue.put(None)
            else:
                raise ValidationError(f"unknown request {op!r}", hint="index, status or stop")
        except StrataError as exc:
            _reply(stream, error_message(exc))
        except (OSError, ValueError):
            log.info("indexd.request_unread")
        _close(conn, stream)

    def _turn_away_queued(self) -> None:
        """Answer ``busy`` to the requests still queued (the daemon is going away)."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                conn, stream, _ = item
                _reply(stream, {"busy": {}})
                _close(conn, stream)

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

    def _index(self, stream: Stream, request: IndexRequest) -> tuple[str, str, int] | None:
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
                hint=f"its log: {log_path(self.settings)}; "
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
        return request.repo, request.ref, sum(r.created for r in results)

    def _run(self, request: IndexRequest, caller: _Caller) -> list[IndexResult]:
        return index_with(self._ensure_service(), request, caller.progress)

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

    def _settle(self, repo: str, ref: str, written: int) -> None:
        """What the code worker does after a push: warm the next run's memos, and
        have Neo4j plan its reads (and, after a run that wrote many versions, its
        writes: :meth:`CodeService.warm_push`)."""
        if self._service is None:
            return
        try:
            self._service.settle(repo, ref)
            self._service.warm_push(written)
        except Exception:  # a cold memo or plan costs the next run time, nothing else
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
            "busy": list(self._busy) if self._busy else None,
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


def _close(conn: socket.socket, stream: Stream) -> None:
    for closing in (stream, conn):
        with suppress(OSError, ValueError):
            closing.close()


def _current_rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)

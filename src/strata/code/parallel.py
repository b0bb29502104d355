"""Parse files in helper processes that any process may start.

The indexer runs in the CLI, in tests, and inside Celery prefork worker
children. Those children are daemonic, and Python (and billiard) refuse to
let a daemonic process start ``multiprocessing`` children, whatever the start
method. Threads do not help either: measured on 2,800 Python files, two
threads took 3.3 s against 3.0 s serially, because extraction (the query
captures and the walk that builds the extract) holds the GIL.

So the helpers are plain ``subprocess`` interpreters running
:mod:`strata.code.parse_worker`, fed length-prefixed pickled chunks on stdin
and answering on stdout. They are not ``multiprocessing`` children, so the
daemon rule does not apply, and they need no cleanup from a parent that dies:
a killed parent closes their stdin, and they exit at end of input.

A helper gets a deadline per chunk (:func:`deadline_s`): a grammar whose scanner
never returns on some input holds the interpreter's lock inside tree-sitter, so
only another process can stop it. A helper past its deadline is killed, the
chunk's files are parsed again one by one in a new helper, and the file that
runs out of time again comes back as None (the indexer skips it, counted as
``parse_timeout``); the run goes on. Small runs (a push's changed files) go
through :func:`parse_guarded`: one helper the process keeps, same deadlines.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any

from strata.code.heap import collector_paused
from strata.code.model import FileExtract
from strata.errors import StrataError

log = logging.getLogger(__name__)

CHUNK_FILES = 64
_HEADER = struct.Struct(">Q")
_STOP_WAIT_S = 5.0
HELPER_MODULE = "strata.code.parse_worker"
# A chunk's deadline: this, plus PARSE_PER_MB_S per MB of its sources. Django's
# chunks parse in ~0.4 s and a 1 MB generated file in ~3 s on this machine.
PARSE_BASE_S = 60.0
PARSE_PER_MB_S = 30.0


class ParseHelperLost(StrataError):
    """A parse helper process exited before it answered (a crash while parsing)."""

    code = "parse_helper_lost"


class _TimedOut(Exception):
    """A helper did not answer within its deadline (it was killed)."""


def deadline_s(chunk: Sequence[tuple[str, bytes, str]]) -> float:
    """How long a helper may take over ``chunk``."""
    return PARSE_BASE_S + PARSE_PER_MB_S * sum(len(s) for _, s, _ in chunk) / 2**20


def write_frame(stream: IO[bytes], value: Any) -> None:
    """One pickled value, prefixed by its length."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next value, or raise EOFError at end of input (also for a cut frame)."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)  # noqa: S301 - frames come from our own helper process


def _helper_env() -> dict[str, str]:
    # The helper must import the very code this process runs (a checkout on
    # sys.path, not only an installed copy).
    path = os.pathsep.join(p for p in sys.path if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}


class _Helper:
    def __init__(self, module: str = HELPER_MODULE) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_helper_env(),
        )
        self.killed = False  # by a deadline (maybe just after it answered: not usable)

    def ask(self, chunk: list[tuple[str, bytes, str]], *, deadline: float | None = None) -> bytes:
        """The record of a chunk of (path, source, key): its ``{path: (key, extract)}``
        pickled as a set file stores it (:func:`strata.code.cache.chunk_record`).
        Past ``deadline`` seconds the helper is killed and _TimedOut raised."""
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        timer = None
        if deadline is not None:
            timer = threading.Timer(deadline, self._kill)
            timer.daemon = True
            timer.start()
        try:
            write_frame(self.proc.stdin, chunk)
            status, value = read_frame(self.proc.stdout)
        except (EOFError, BrokenPipeError, OSError) as exc:
            if timer is not None:
                timer.cancel()
            if self.killed:
                raise _TimedOut from exc
            code = self.proc.poll()
            raise ParseHelperLost(
                f"a parse helper exited (code {code}) while parsing one of "
                + ", ".join(p for p, _, _ in chunk[:3])
                + (" ..." if len(chunk) > 3 else ""),
                paths=[p for p, _, _ in chunk[:20]],
            ) from exc
        if timer is not None:
            timer.cancel()
        if status == "error":
            raise value
        record: bytes = value
        return record

    @property
    def usable(self) -> bool:
        """Neither killed by a deadline nor exited."""
        return not self.killed and self.proc.poll() is None

    def _kill(self) -> None:
        self.killed = True
        with contextlib.suppress(OSError):
            self.proc.kill()

    def stop(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):  # a dead helper's pipe may already be gone
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def parse_parallel(
    items: Sequence[tuple[str, bytes]],
    workers: int,
    *,
    keys: Sequence[str] | None = None,
    sink: Callable[[bytes, dict[str, str]], None] | None = None,
    helper_module: str = HELPER_MODULE,
) -> list[FileExtract | None]:
    """Extracts of ``items`` (path, source) in order, parsed by ``workers`` helpers;
    None for a file whose parse ran out of time (see the module's docstring).

    Chunks are handed out as helpers free up, so one slow file does not hold
    back a whole share. The first error (a parse error re-raised from the
    helper, or a helper that died) stops the run and is raised here; the
    helpers are always stopped before this returns.

    ``sink`` receives each chunk's record as it arrives, ``{path: (key, extract)}``
    pickled as the extract cache stores it, with the chunk's ``{path: key}``
    (``keys``: the files' blob ids, in the order of ``items``); the indexer writes
    them into the cache file of the run without pickling the extracts again.
    """
    chunks = _chunks(items, keys)
    run = _Feeding(chunks, sink, helper_module)
    try:
        for _ in range(max(1, min(workers, len(chunks)))):
            run.helpers.append(_Helper(helper_module))
    except OSError:
        for helper in run.helpers:
            helper.stop()
        return _parse_here(items)
    return run.run()


Chunk = list[tuple[str, bytes, str]]


def _chunks(items: Sequence[tuple[str, bytes]], keys: Sequence[str] | None = None) -> list[Chunk]:
    """``items`` as (path, source, key) in chunks of CHUNK_FILES."""
    named = [(p, s, keys[i] if keys is not None else "") for i, (p, s) in enumerate(items)]
    return [named[i : i + CHUNK_FILES] for i in range(0, len(named), CHUNK_FILES)]


def _parse_here(items: Sequence[tuple[str, bytes]]) -> list[FileExtract | None]:
    """No helper could start: parse in this process (without a deadline)."""
    log.warning("cannot start a parse helper; parsing in this process", exc_info=True)
    from strata.code.languages import parse_file

    return [parse_file(path, source) for path, source in items]


# The helper this process keeps for small runs (parse_guarded), by helper module.
_kept: dict[str, _Helper] = {}
_kept_lock = threading.Lock()


def _take_kept(helper_module: str) -> _Helper:
    """The kept helper, taken out, or a new one if it is missing or unusable (raises
    OSError when none can start); the caller holds ``_kept_lock``."""
    helper = _kept.pop(helper_module, None)
    if helper is None or not helper.usable:
        helper = _Helper(helper_module)
    return helper


def start_helper(helper_module: str = HELPER_MODULE) -> None:
    """Start the helper :func:`parse_guarded` uses, if it is not running (between
    runs: the next push does not wait for its start)."""
    with _kept_lock:
        try:
            _kept[helper_module] = _take_kept(helper_module)
        except OSError:
            log.warning("cannot start a parse helper", exc_info=True)


def parse_guarded(
    items: Sequence[tuple[str, bytes]], *, helper_module: str = HELPER_MODULE
) -> list[FileExtract | None]:
    """Extracts of a few ``items`` (path, source), parsed by the one helper this
    process keeps (started on first use, ~0.3 s; then a pipe's round trip), with
    parse_parallel's deadlines: None for a file that ran out of time."""
    feeding = _Feeding(_chunks(items), None, helper_module)
    found: list[FileExtract | None] = []
    with _kept_lock:
        try:
            helper = _take_kept(helper_module)
        except OSError:
            return _parse_here(items)
        for chunk in feeding.chunks:
            try:
                helper, part = feeding.parse(helper, chunk)
            except BaseException:
                if helper.proc.poll() is None:
                    _kept[helper_module] = helper  # a parse error: the helper is fine
                else:
                    helper.stop()
                raise
            found.extend(part)
        _kept[helper_module] = helper
    return found


class _Feeding:
    """One parse_parallel run: a feeding thread per helper hands out the chunks."""

    def __init__(
        self,
        chunks: list[Chunk],
        sink: Callable[[bytes, dict[str, str]], None] | None,
        helper_module: str,
    ) -> None:
        self.chunks = chunks
        self.sink = sink
        self.helper_module = helper_module
        self.results: list[list[FileExtract | None] | None] = [None] * len(chunks)
        self.sunk = threading.Lock()
        self.todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(chunks)):
            self.todo.put(i)
        self.errors: list[BaseException] = []
        self.helpers: list[_Helper] = []

    def run(self) -> list[FileExtract | None]:
        # The feeding threads only wait on pipes and unpickle; the helpers parse.
        # The answers are many small objects and no cycles: the collector's passes
        # over them while they arrive cost more than reading them (as in the cache).
        threads = [
            threading.Thread(target=self.feed, args=(h,), name="strata-parse-feed")
            for h in list(self.helpers)
        ]
        try:
            with collector_paused():
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
        finally:
            self.errors.append(StopIteration())  # tells feeders still running to stop
            for helper in list(self.helpers):
                helper.stop()
        if not isinstance(self.errors[0], StopIteration):
            raise self.errors[0]
        return [extract for chunk in self.results if chunk is not None for extract in chunk]

    def feed(self, helper: _Helper) -> None:
        while not self.errors:
            try:
                i = self.todo.get_nowait()
            except queue.Empty:
                return
            try:
                helper, self.results[i] = self.parse(helper, self.chunks[i])
            except BaseException as exc:
                self.errors.append(exc)
                return

    def parse(self, helper: _Helper, chunk: Chunk) -> tuple[_Helper, list[FileExtract | None]]:
        """``chunk`` parsed by ``helper`` within its deadline, else file by file; the
        helper to go on with (another one if this one was killed)."""
        try:
            found = self.take(helper.ask(chunk, deadline=deadline_s(chunk)), chunk)
        except _TimedOut:
            return self.one_by_one(self.renewed(helper), chunk)
        if helper.killed:  # its deadline came just after it answered
            helper = self.renewed(helper)
        return helper, found

    def one_by_one(self, helper: _Helper, chunk: Chunk) -> tuple[_Helper, list[FileExtract | None]]:
        """The chunk's files alone, each with its own deadline: the one that runs out
        of time again is None."""
        found: list[FileExtract | None] = []
        for item in chunk:
            try:
                found.extend(self.take(helper.ask([item], deadline=deadline_s([item])), [item]))
            except _TimedOut:
                log.warning("parse of %s ran out of time; skipped", item[0])
                found.append(None)
                helper = self.renewed(helper)
        return helper, found

    def take(self, record: bytes, chunk: Chunk) -> list[FileExtract | None]:
        parsed: dict[str, tuple[str, FileExtract]] = pickle.loads(record)  # noqa: S301
        if self.sink is not None:
            with self.sunk:
                self.sink(record, {p: k for p, _, k in chunk})
        return [extract for _, extract in parsed.values()]

    def renewed(self, helper: _Helper) -> _Helper:
        helper.stop()
        fresh = _Helper(self.helper_module)
        self.helpers.append(fresh)
        return fresh

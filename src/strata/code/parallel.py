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


class ParseHelperLost(StrataError):
    """A parse helper process exited before it answered (a crash while parsing)."""

    code = "parse_helper_lost"


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
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "strata.code.parse_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_helper_env(),
        )

    def ask(self, chunk: list[tuple[str, bytes, str]]) -> bytes:
        """The record of a chunk of (path, source, key): its ``{path: (key, extract)}``
        pickled as a set file stores it (:func:`strata.code.cache.chunk_record`)."""
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        try:
            write_frame(self.proc.stdin, chunk)
            status, value = read_frame(self.proc.stdout)
        except (EOFError, BrokenPipeError, OSError) as exc:
            code = self.proc.poll()
            raise ParseHelperLost(
                f"a parse helper exited (code {code}) while parsing one of "
                + ", ".join(p for p, _, _ in chunk[:3])
                + (" ..." if len(chunk) > 3 else ""),
                paths=[p for p, _, _ in chunk[:20]],
            ) from exc
        if status == "error":
            raise value
        record: bytes = value
        return record

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
) -> list[FileExtract]:
    """Extracts of ``items`` (path, source) in order, parsed by ``workers`` helpers.

    Chunks are handed out as helpers free up, so one slow file does not hold
    back a whole share. The first error (a parse error re-raised from the
    helper, or a helper that died) stops the run and is raised here; the
    helpers are always stopped before this returns.

    ``sink`` receives each chunk's record as it arrives, ``{path: (key, extract)}``
    pickled as the extract cache stores it, with the chunk's ``{path: key}``
    (``keys``: the files' blob ids, in the order of ``items``); the indexer writes
    them into the cache file of the run without pickling the extracts again.
    """
    named = [(p, s, keys[i] if keys is not None else "") for i, (p, s) in enumerate(items)]
    chunks = [named[i : i + CHUNK_FILES] for i in range(0, len(named), CHUNK_FILES)]
    results: list[list[FileExtract] | None] = [None] * len(chunks)
    sunk = threading.Lock()
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for i in range(len(chunks)):
        todo.put(i)
    errors: list[BaseException] = []
    helpers: list[_Helper] = []
    try:
        for _ in range(max(1, min(workers, len(chunks)))):
            helpers.append(_Helper())
    except OSError:
        log.warning("cannot start parse helpers; parsing in this process", exc_info=True)
        for helper in helpers:
            helper.stop()
        from strata.code.languages import parse_file

        return [parse_file(path, source) for path, source in items]

    def feed(helper: _Helper) -> None:
        while not errors:
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            try:
                record = helper.ask(chunks[i])
                parsed: dict[str, tuple[str, FileExtract]] = pickle.loads(record)  # noqa: S301
                results[i] = [extract for _, extract in parsed.values()]
                if sink is not None:
                    with sunk:
                        sink(record, {p: k for p, _, k in chunks[i]})
            except BaseException as exc:
                errors.append(exc)
                return

    # The feeding threads only wait on pipes and unpickle; the helpers do the parsing.
    # The answers are many small objects and no cycles: the collector's passes over
    # them while they arrive cost more than reading them (as in the cache's load).
    threads = [threading.Thread(target=feed, args=(h,), name="strata-parse-feed") for h in helpers]
    try:
        with collector_paused():
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        errors.append(StopIteration())  # tells feeders still running (an interrupt) to stop
        for helper in helpers:
            helper.stop()
    if not isinstance(errors[0], StopIteration):
        raise errors[0]
    return [extract for chunk in results if chunk is not None for extract in chunk]

"""A local cache of parsed files, keyed by blob sha, per repository and ref.

Parsing is the expensive, pure part of indexing: an unchanged blob parses to
the same extract, as long as the extractor is the same. The cache is a
derived, disposable speed-up (the graph and git stay the truth); a missing,
unreadable, torn or foreign cache file only means re-parsing.

- Keyed by the extractor's version: a hash of the adapters' code and queries,
  the extract model and its shape, and the grammar packages' versions
  (:func:`extractor_version`), so any change to them re-parses by itself.
- One file per (repository, ref, version) holding one commit's files: a blob
  that left the tree leaves the cache with the next save.
- Written atomically (a per-process temporary file, then a rename; the last
  writer wins), by a non-daemon thread that :meth:`ExtractCache.flush` joins:
  the CLI and the worker flush before they report or exit.
- Bounded: past ``max_bytes`` in total, the least recently written files go.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import logging
import os
import pickle
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strata.code import model
from strata.code.model import FileExtract

log = logging.getLogger(__name__)

FORMAT = 2
MEMORY_ENTRIES = 4
MAX_TOTAL_BYTES = 512 * 1024 * 1024
STALE_TMP_S = 3600
# What the extractor is made of, relative to the strata.code package: every
# .py and .scm below these (so a restructured languages/ is covered as is).
CODE_DIR = Path(__file__).resolve().parent
# The flow IR rides on every Python extract: its builder and model are the extractor too.
VERSION_SOURCES: tuple[str, ...] = (
    "languages",
    "queries",
    "model.py",
    "flow/model.py",
    "flow/python.py",
)
_SUFFIXES = (".py", ".scm")


@dataclass(slots=True)
class ExtractSet:
    """Parsed files of one commit: path -> (blob sha, extract)."""

    commit: str | None = None
    files: dict[str, tuple[str, FileExtract]] = field(default_factory=dict)

    def by_blob(self) -> dict[str, FileExtract]:
        return {blob: extract for blob, extract in self.files.values()}


def version_of(code_dir: Path, sources: tuple[str, ...] = VERSION_SOURCES) -> str:
    """A hash of the extractor's source files under ``code_dir``, the shape of the
    extract model, and the installed grammar packages' versions."""
    digest = hashlib.sha256(f"format {FORMAT}\n".encode())
    for source in sources:
        root = code_dir / source
        paths = sorted(root.rglob("*")) if root.is_dir() else [root]
        for path in paths:
            if path.suffix not in _SUFFIXES or not path.is_file():
                continue
            digest.update(path.relative_to(code_dir).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    digest.update(_shape(FileExtract).encode())
    digest.update(_grammars().encode())
    return digest.hexdigest()[:16]


@functools.cache
def extractor_version() -> str:
    """The running extractor's version (computed once per process)."""
    return version_of(CODE_DIR)


def _shape(cls: type[Any], seen: set[str] | None = None) -> str:
    """Field names and types of a model dataclass and of the model dataclasses it uses."""
    seen = set() if seen is None else seen
    seen.add(cls.__name__)
    parts = [
        cls.__name__ + "(" + ",".join(f"{f.name}:{f.type}" for f in dataclasses.fields(cls)) + ")"
    ]
    for f in dataclasses.fields(cls):
        for name, other in vars(model).items():
            if (
                name not in seen
                and isinstance(other, type)
                and dataclasses.is_dataclass(other)
                and name in str(f.type)
            ):
                parts.append(_shape(other, seen))
    return ";".join(parts)


def _grammars() -> str:
    found = {
        (dist.metadata["Name"] or "").lower().replace("_", "-"): dist.version
        for dist in importlib.metadata.distributions()
        if (dist.metadata["Name"] or "").lower().replace("_", "-").startswith("tree-sitter")
    }
    return ",".join(f"{k}=={v}" for k, v in sorted(found.items()))


class ExtractCache:
    """Disk cache under ``directory``, with a small in-process LRU in front.

    One instance per process serves every job; not for concurrent use from
    several threads (the worker runs one job per process, the CLI one index).
    """

    def __init__(
        self, directory: Path, *, version: str | None = None, max_bytes: int = MAX_TOTAL_BYTES
    ) -> None:
        self.directory = directory
        self.version = version or extractor_version()
        self.max_bytes = max_bytes
        self._memory: OrderedDict[tuple[str, str], ExtractSet] = OrderedDict()
        self._writer: threading.Thread | None = None

    def path(self, repo: str, ref: str) -> Path:
        """The file that holds ``repo``/``ref`` for this extractor version."""
        digest = hashlib.sha256(f"{repo}\0{ref}".encode()).hexdigest()[:24]
        return self.directory / f"{digest}-{self.version}.pickle"

    def load(self, repo: str, ref: str, *, head: str | None = None) -> ExtractSet:
        """The last saved set (its ``commit`` says which); from memory only when it was
        saved at ``head``.

        One cache serves every job of a process, and another process may have
        indexed the ref since: a remembered set of another commit is re-read
        from disk (after this process's own pending write).
        """
        key = (repo, ref)
        held = self._memory.get(key)
        if held is not None and held.commit == head:
            self._memory.move_to_end(key)
            return held
        self.flush()
        data = self._read(self.path(repo, ref))
        if data is None:
            return ExtractSet()
        self._remember(key, data)
        return data

    def save(self, repo: str, ref: str, extracts: ExtractSet) -> None:
        """Remember at once; write to disk on a (non-daemon) thread, off the index's path."""
        key = (repo, ref)
        self._remember(key, extracts)
        self.flush()  # one write at a time, in order
        writer = threading.Thread(
            target=self._persist,
            args=(self.path(repo, ref), extracts),
            name="strata-extract-cache",
            daemon=False,  # a daemon thread dies with the CLI, and the write with it
        )
        self._writer = writer
        writer.start()

    def flush(self) -> None:
        """Wait for the pending write (the CLI and the worker call it before they report)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.join()

    def _read(self, path: Path) -> ExtractSet | None:
        try:
            with path.open("rb") as handle:
                fmt, version, data = pickle.load(handle)  # noqa: S301 - our own cache file
        except (
            OSError,
            EOFError,
            pickle.UnpicklingError,
            ValueError,
            TypeError,
            AttributeError,
            ImportError,
            IndexError,
            KeyError,
        ):
            return None  # missing, torn, or written by another code version
        if fmt != FORMAT or version != self.version or not isinstance(data, ExtractSet):
            return None
        return data

    def _persist(self, path: Path, extracts: ExtractSet) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
            try:
                with tmp.open("wb") as handle:
                    pickle.dump(
                        (FORMAT, self.version, extracts), handle, protocol=pickle.HIGHEST_PROTOCOL
                    )
                tmp.replace(path)
            finally:
                tmp.unlink(missing_ok=True)
            self._evict(keep=path)
        except OSError:
            log.warning("could not write the extract cache %s", path.name, exc_info=True)

    def _evict(self, *, keep: Path) -> None:
        """Drop the least recently written sets past ``max_bytes``, and stale temporaries."""
        now = time.time()
        sets: list[tuple[float, int, Path]] = []
        for entry in self.directory.iterdir():
            try:
                stat = entry.stat()
            except OSError:
                continue  # another process just renamed or removed it
            if entry.suffix == ".tmp" and now - stat.st_mtime > STALE_TMP_S:
                entry.unlink(missing_ok=True)  # left by a writer that was killed
            elif entry.suffix == ".pickle":
                sets.append((stat.st_mtime, stat.st_size, entry))
        total = 0
        for _, size, entry in sorted(sets, key=lambda s: s[0], reverse=True):
            total += size
            if total > self.max_bytes and entry != keep:
                entry.unlink(missing_ok=True)

    def _remember(self, key: tuple[str, str], extracts: ExtractSet) -> None:
        self._memory[key] = extracts
        self._memory.move_to_end(key)
        while len(self._memory) > MEMORY_ENTRIES:
            self._memory.popitem(last=False)

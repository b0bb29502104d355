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
  the CLI and the worker flush before they report or exit. The indexer
  *stages* a run's set before its graph write (the pickling overlaps the
  write) and has it renamed into place only once the write succeeded.
- A push changes a few files of a large set: when this process knows what the
  set file holds, it writes only a *delta* beside it (the changed paths, the
  commit it applies to and the set file's write id), and rewrites the whole set
  every :data:`MAX_DELTAS` deltas. A reader applies the deltas that continue
  its chain and stops at the first that does not (another process's): it then
  holds a consistent older commit, which only means re-parsing more.
- Bounded: past ``max_bytes`` in total, the least recently written files go.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import hashlib
import importlib.metadata
import io
import logging
import os
import pickle
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from strata.code import model
from strata.code.heap import collector_paused
from strata.code.model import FileExtract

log = logging.getLogger(__name__)

# 3: set files carry a write id, deltas follow them; 4: model objects as calls;
# 5: a head, then entries in chunks, then an end mark
FORMAT = 5
CHUNK_ENTRIES = 64  # files per pickled chunk (the pickler's memo holds one chunk)
_END = "end"  # the last record of a complete file (a file cut short has none)
MEMORY_ENTRIES = 4
MAX_TOTAL_BYTES = 512 * 1024 * 1024
STALE_TMP_S = 3600
MAX_DELTAS = 16  # deltas beside a set file before the whole set is rewritten
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


@dataclass(frozen=True, slots=True)
class _OnDisk:
    """What this process last wrote or read for a ref: the set file's write id, the
    commit its chain reaches, its files, and how many deltas follow it."""

    write_id: str
    commit: str | None
    files: dict[str, tuple[str, FileExtract]]
    deltas: int


@dataclass(frozen=True, slots=True)
class _Written:
    """A record written to ``tmp``, to be renamed to ``path``; ``record`` is what
    this process then knows the ref's files hold."""

    key: tuple[str, str]
    path: Path
    tmp: Path
    record: _OnDisk


@dataclass(slots=True)
class _Staging:
    """A set being written by :meth:`ExtractCache.stage`; ``ready`` once written."""

    key: tuple[str, str]
    extracts: ExtractSet
    ready: _Written | None = None
    early: EarlySet | None = None


class EarlySet:
    """A set file written while its files are parsed: the head first, then each
    chunk's record as a parse helper answers it (:func:`strata.code.parallel.parse_parallel`'s
    ``sink``), so a full index's set is on disk without pickling its extracts again
    (4.2 s of the GIL on Django, beside the run's write). :meth:`ExtractCache.stage`
    finishes it when it holds exactly the staged set, else drops it.
    """

    def __init__(self, path: Path, version: str, commit: str | None) -> None:
        self.path = path
        self.write_id = uuid.uuid4().hex
        self.tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        self.files: dict[str, str] = {}  # path -> blob of what the records hold
        self.commit = commit
        self._handle: IO[bytes] | None = None
        self.broken = False
        self._finished = False
        self._head = (FORMAT, version, self.write_id, commit)

    def add(self, record: bytes, files: Mapping[str, str]) -> None:
        """Append one chunk's record (one pickle of ``{path: (blob, extract)}``). A file
        that cannot be written is given up (the set is then written at the end, as
        usual); never an error of the run."""
        if self.broken:
            return
        try:
            if self._handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._handle = self.tmp.open("wb")
                pickle.dump(self._head, self._handle, protocol=pickle.HIGHEST_PROTOCOL)
            self._handle.write(record)
        except OSError:
            log.warning("could not write the extract cache %s", self.tmp.name, exc_info=True)
            self.broken = True
            self.drop()
            return
        self.files.update(files)

    def finish(self) -> Path:
        """Write the end mark and close: the whole file, still under its temporary name
        (renamed into place by whoever took it)."""
        if self._handle is None:
            raise OSError("an early set with no record")
        pickle.dump(_END, self._handle, protocol=pickle.HIGHEST_PROTOCOL)
        self._handle.close()
        self._handle = None
        self._finished = True
        return self.tmp

    def drop(self) -> None:
        """Close and remove the file, unless :meth:`finish` handed it on."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if not self._finished:
            self.tmp.unlink(missing_ok=True)


@dataclass(slots=True)
class ExtractSet:
    """Parsed files of one commit: path -> (blob sha, extract)."""

    commit: str | None = None
    files: dict[str, tuple[str, FileExtract]] = field(default_factory=dict)
    # Per path, the digest of the facts the graph holds for the file at ``commit``
    # (:func:`strata.code.sync.facts_digest`); in memory only, never on disk.
    digests: dict[str, bytes] = field(default_factory=dict)

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
        self._disk: dict[tuple[str, str], _OnDisk] = {}
        self._writer: threading.Thread | None = None
        self._staged: _Staging | None = None

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
        data = self._read(self.path(repo, ref), key)
        if data is None:
            return ExtractSet()
        self._remember(key, data)
        return data

    def held(self, repo: str, ref: str) -> ExtractSet | None:
        """The set this process keeps in memory for ``repo``/``ref`` (no disk read)."""
        return self._memory.get((repo, ref))

    def save(self, repo: str, ref: str, extracts: ExtractSet) -> None:
        """Remember at once; write to disk on a (non-daemon) thread, off the index's path.

        A set :meth:`stage` already writes is published instead: the file it
        wrote is renamed into place (after its thread is done).
        """
        key = (repo, ref)
        self._remember(key, extracts)
        staged = self._staged
        if staged is not None and staged.key == key and staged.extracts is extracts:
            self.flush()
            self._staged = None
            if staged.ready is not None:
                self._publish(staged.ready)
            return
        self.discard()
        self._start(self._persist, self.path(repo, ref), key, extracts)

    def early(self, repo: str, ref: str, commit: str | None) -> EarlySet:
        """A set file to fill while the run parses (see :class:`EarlySet`); the run
        hands it to :meth:`stage`, which finishes or drops it."""
        return EarlySet(self.path(repo, ref), self.version, commit)

    def stage(
        self, repo: str, ref: str, extracts: ExtractSet, *, early: EarlySet | None = None
    ) -> None:
        """Start writing ``extracts`` to disk where no reader looks yet: :meth:`save`
        of the same set publishes it, :meth:`discard` drops it.

        The indexer stages its new set before its graph write and saves it after:
        the pickling overlaps the write (3 s of a full Django index), and a write
        that fails leaves on disk the set of the head the graph still has.
        """
        self.discard()
        staged = _Staging((repo, ref), extracts, early=early)
        self._staged = staged
        self._start(self._stage, self.path(repo, ref), staged)

    def discard(self) -> None:
        """Drop a staged set that was not saved (its write failed)."""
        staged, self._staged = self._staged, None
        self.flush()
        if staged is not None and staged.ready is not None:
            staged.ready.tmp.unlink(missing_ok=True)
        if staged is not None and staged.early is not None:
            staged.early.drop()

    def flush(self) -> None:
        """Wait for the pending write (the CLI and the worker call it before they report)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.join()

    def _start(self, target: Callable[..., None], *args: Any) -> None:
        self.flush()  # one write at a time, in order
        writer = threading.Thread(
            target=target,
            args=args,
            name="strata-extract-cache",
            daemon=False,  # a daemon thread dies with the CLI, and the write with it
        )
        self._writer = writer
        writer.start()

    def _read(self, path: Path, key: tuple[str, str]) -> ExtractSet | None:
        loaded = _load(path)
        if loaded is None:
            return None  # missing or torn
        head, files = loaded
        if len(head) != 4 or head[:2] != (FORMAT, self.version):
            return None  # written by another code version
        write_id, commit = head[2], head[3]
        if not isinstance(write_id, str):
            return None
        applied = 0
        for n in range(1, MAX_DELTAS + 1):
            delta = _load(_delta_path(path, n))
            if delta is None or delta[0][:4] != (FORMAT, self.version, write_id, commit):
                break  # the chain ends (or another process's delta): a consistent commit
            commit, changes = delta[0][4], delta[1]
            for changed, entry in changes.items():
                if entry is None:
                    files.pop(changed, None)
                else:
                    files[changed] = entry
            applied = n
        out = ExtractSet(commit, files)
        self._disk[key] = _OnDisk(write_id, commit, out.files, applied)
        return out

    def _persist(self, path: Path, key: tuple[str, str], extracts: ExtractSet) -> None:
        try:
            self._publish(self._prepare(path, key, extracts))
        except OSError:
            log.warning("could not write the extract cache %s", path.name, exc_info=True)

    def _stage(self, path: Path, staging: _Staging) -> None:
        try:
            staging.ready = self._prepare(path, staging.key, staging.extracts, staging.early)
        except OSError:
            log.warning("could not write the extract cache %s", path.name, exc_info=True)

    def _prepare(
        self,
        path: Path,
        key: tuple[str, str],
        extracts: ExtractSet,
        early: EarlySet | None = None,
    ) -> _Written:
        """Write the set, or a delta when this process knows the set file, to a
        temporary file beside where it goes; an early set that holds exactly these
        files (and commit) is finished instead of writing the set again."""
        try:
            return self._prepare_fresh(path, key, extracts, early)
        finally:
            if early is not None:
                early.drop()  # its file, unless finished: then the written set's

    def _prepare_fresh(
        self,
        path: Path,
        key: tuple[str, str],
        extracts: ExtractSet,
        early: EarlySet | None,
    ) -> _Written:
        self.directory.mkdir(parents=True, exist_ok=True)
        known = self._disk.get(key)
        if known is not None and known.deltas < MAX_DELTAS and path.exists():
            # An extract is a function of its blob (the version is fixed), so blobs tell.
            changes: dict[str, tuple[str, FileExtract] | None] = {
                p: e
                for p, e in extracts.files.items()
                if (known.files.get(p) or ("", None))[0] != e[0]
            }
            changes.update({p: None for p in known.files if p not in extracts.files})
            if len(changes) * 10 < max(len(extracts.files), 1):
                n = known.deltas + 1
                target = _delta_path(path, n)
                delta_head = (FORMAT, self.version, known.write_id, known.commit, extracts.commit)
                record = _OnDisk(known.write_id, extracts.commit, extracts.files, n)
                return _Written(key, target, _write_tmp(target, delta_head, changes), record)
        if (
            early is not None
            and not early.broken
            and early.path == path
            and early.commit == extracts.commit
            and early.files == {p: blob for p, (blob, _) in extracts.files.items()}
        ):
            record = _OnDisk(early.write_id, extracts.commit, extracts.files, 0)
            return _Written(key, path, early.finish(), record)
        write_id = uuid.uuid4().hex
        head = (FORMAT, self.version, write_id, extracts.commit)
        record = _OnDisk(write_id, extracts.commit, extracts.files, 0)
        return _Written(key, path, _write_tmp(path, head, extracts.files), record)

    def _publish(self, written: _Written) -> None:
        """Rename a prepared file into place: readers see all of it or nothing."""
        try:
            written.tmp.replace(written.path)
        except OSError:
            written.tmp.unlink(missing_ok=True)
            log.warning("could not write the extract cache %s", written.path.name, exc_info=True)
            return
        self._disk[written.key] = written.record
        if written.record.deltas == 0:
            for n in range(1, MAX_DELTAS + 1):  # they belong to the set file just replaced
                _delta_path(written.path, n).unlink(missing_ok=True)
            self._evict(keep=written.path)

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
                for n in range(1, MAX_DELTAS + 1):
                    _delta_path(entry, n).unlink(missing_ok=True)

    def _remember(self, key: tuple[str, str], extracts: ExtractSet) -> None:
        self._memory[key] = extracts
        self._memory.move_to_end(key)
        while len(self._memory) > MEMORY_ENTRIES:
            self._memory.popitem(last=False)


def _delta_path(path: Path, n: int) -> Path:
    return path.with_name(f"{path.name}.{n}.delta")


def _load(path: Path) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """A cache record (its head and its entries), or None for a missing, torn or
    foreign file."""
    # A set is millions of small objects and no cycles: with the collector on, its
    # generational passes over the growing heap cost more than the unpickling itself.
    try:
        with collector_paused(), path.open("rb") as handle:
            # One pickle per chunk, each with its own memo (see _write_tmp).
            head = pickle.load(handle)  # noqa: S301 - our own cache file
            if not isinstance(head, tuple) or not head:
                return None
            entries: dict[str, Any] = {}
            while True:
                chunk = pickle.load(handle)  # noqa: S301 - our own cache file
                if isinstance(chunk, str) and chunk == _END:
                    break
                entries.update(chunk)
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
        return None  # EOFError before the end mark: a torn file
    # Long-lived from now on: the collector need not scan it again (a full pass over
    # a large set costs seconds, wherever in a run it happens to fall).
    gc.freeze()
    return head, entries


def extract_pickler(stream: IO[bytes]) -> pickle.Pickler:
    """A pickler that writes extracts as constructor calls (:mod:`strata.code.reduction`):
    the cache's files and the parse helpers' answers."""
    return pickle.Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL)


def chunk_record(parsed: dict[str, tuple[str, FileExtract]]) -> bytes:
    """A chunk's ``{path: (key, extract)}`` pickled as a set file stores its entries
    (:func:`extract_pickler`): what a parse helper answers, and an
    :class:`EarlySet` appends as it is.

    Extracts go as constructor calls: the parent unpickles every file a full index
    parses, and dataclasses' own ``__setstate__`` made that three times slower
    (700 Django files: 0.88 s against 0.45 s, and 0.12 s with the collector
    paused, as the parent does).
    """
    buffer = io.BytesIO()
    extract_pickler(buffer).dump(parsed)
    return buffer.getvalue()


def _write_tmp(path: Path, head: tuple[Any, ...], entries: dict[str, Any]) -> Path:
    """A per-process temporary file beside ``path`` holding the record; renamed into
    place by the caller (readers then see all of it or nothing).

    The entries go as one pickle per :data:`CHUNK_ENTRIES` of them, each with its
    own memo: one pickle of a whole Django set held a memo of every object in it
    (200 MB, beside the index still running) until the last byte was written.
    """
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    items = list(entries.items())
    chunks = [dict(items[i : i + CHUNK_ENTRIES]) for i in range(0, len(items), CHUNK_ENTRIES)]
    try:
        with tmp.open("wb") as handle:
            for record in (head, *chunks, _END):
                extract_pickler(handle).dump(record)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp

"""A local cache of parsed files, keyed by blob sha, per repository and ref.

Parsing is the expensive, pure part of indexing: an unchanged blob parses to
the same extract. The cache is a derived, disposable speed-up (the graph and
git stay the truth); a missing or unreadable cache only means re-parsing.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from strata.code.model import FileExtract

FORMAT = 1
MEMORY_ENTRIES = 4


@dataclass(slots=True)
class ExtractSet:
    """Parsed files of one commit: path -> (blob sha, extract)."""

    commit: str | None = None
    files: dict[str, tuple[str, FileExtract]] = field(default_factory=dict)

    def by_blob(self) -> dict[str, FileExtract]:
        return {blob: extract for blob, extract in self.files.values()}


class ExtractCache:
    """Disk cache under ``directory``, with a small in-process LRU in front."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._memory: OrderedDict[tuple[str, str], ExtractSet] = OrderedDict()
        self._writes: dict[tuple[str, str], threading.Thread] = {}

    def _path(self, repo: str, ref: str) -> Path:
        digest = hashlib.sha256(f"{repo}\0{ref}".encode()).hexdigest()[:24]
        return self.directory / f"{digest}.pickle"

    def load(self, repo: str, ref: str, *, head: str | None = None) -> ExtractSet:
        """The last saved set; from memory only when it was saved at ``head``.

        One cache serves every job of a process, and another process may have
        indexed the ref since: a remembered set of another commit is re-read
        from disk (after this process's own pending write of it).
        """
        key = (repo, ref)
        held = self._memory.get(key)
        if held is not None and held.commit == head:
            self._memory.move_to_end(key)
            return held
        writer = self._writes.get(key)
        if writer is not None:
            writer.join()
        path = self._path(repo, ref)
        try:
            with path.open("rb") as handle:
                version, data = pickle.load(handle)  # noqa: S301 - our own local cache file
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
            return ExtractSet()
        if version != FORMAT or not isinstance(data, ExtractSet):
            return ExtractSet()
        self._remember(key, data)
        return data

    def save(self, repo: str, ref: str, extracts: ExtractSet, *, wait: bool = False) -> None:
        """Remember at once; write to disk in the background (off the reindex's path)."""
        key = (repo, ref)
        self._remember(key, extracts)
        previous = self._writes.get(key)
        if previous is not None:
            previous.join()
        writer = threading.Thread(
            target=self._persist, args=(self._path(repo, ref), extracts), daemon=True,
            name="strata-extract-cache",
        )
        self._writes[key] = writer
        writer.start()
        if wait:
            writer.join()

    def flush(self) -> None:
        """Wait for background writes (tests, shutdown)."""
        for writer in list(self._writes.values()):
            writer.join()

    def _persist(self, path: Path, extracts: ExtractSet) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        with tmp.open("wb") as handle:
            pickle.dump((FORMAT, extracts), handle, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)

    def _remember(self, key: tuple[str, str], extracts: ExtractSet) -> None:
        self._memory[key] = extracts
        self._memory.move_to_end(key)
        while len(self._memory) > MEMORY_ENTRIES:
            self._memory.popitem(last=False)

"""Where a pack reads file contents: the repository's git objects, by blob id.

The File state names its blob (``content_hash``); the bytes come from the
repository's mirror or registered local path, never from the graph.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from strata.errors import StrataError
from strata.git import Git

BlobReader = Callable[[str, str], bytes | None]
"""``(repository, blob sha) -> bytes`` or None when the objects are not on this machine."""


def git_blobs(locate: Callable[[str], Path | None]) -> BlobReader:
    """A reader over the git directory ``locate(repository)`` names."""

    def read(repository: str, blob: str) -> bytes | None:
        where = locate(repository)
        if where is None or not where.exists():
            return None
        try:
            return Git(where).blobs([blob]).get(blob)
        except StrataError:
            return None  # a pruned mirror: the outline is left out, the pack says so

    return read


def mirror_or_path(mirrors: Path, paths: dict[str, str] | None = None) -> Callable[[str], Path]:
    """The registered local path of a repository, else its mirror under ``mirrors``."""

    def locate(repository: str) -> Path:
        if paths and repository in paths:
            return Path(paths[repository])
        return mirrors / f"{repository}.git"

    return locate

"""Where a pack reads file contents: the repository's git objects, by blob id.

The File state names its blob (``content_hash``); the bytes come from the
repository's mirror or registered local path, never from the graph.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from strata.search.bodies import git_blob_source

BlobReader = Callable[[str, str], bytes | None]
"""``(repository, blob sha) -> bytes`` or None when the objects are not on this machine."""


def git_blobs(locate: Callable[[str], Path | None]) -> BlobReader:
    """A reader of one blob over the git directory ``locate(repository)`` names (the
    search documents' batch reader, asked for one sha)."""
    batch = git_blob_source(locate)

    def read(repository: str, blob: str) -> bytes | None:
        return batch(repository, [blob]).get(blob)

    return read

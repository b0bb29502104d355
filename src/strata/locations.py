"""Where a repository's git objects live, for the readers that need blobs.

Search documents (body words), context packs (code lines) and cards read blobs
after the index has run, in other processes. The objects are in one of three
places: the local path a repository was registered with, the mirror the code
worker fetches pushes into, or the local clone ``strata index PATH`` read
(recorded here as a ``LocalSource`` when that run starts). One locator asks in
that order and answers only a folder that exists, so every reader finds the
same objects and a repository indexed from the command line is readable too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from strata.graph.gateway import Gateway

LOCATIONS = """
OPTIONAL MATCH (r:RepoRegistration {name: $name})
OPTIONAL MATCH (s:LocalSource {repo: $name})
RETURN r.path AS registered, s.path AS local
"""
RECORD = """
MERGE (s:LocalSource {repo: $repo})
SET s.path = $path, s.recorded_at = datetime($now)
"""
TTL_S = 30.0  # a context pack reads many blobs of one repository: one lookup for them all

Locate = Callable[[str], Path | None]
"""``repository name -> its git folder on this machine``, or None."""


def record_local_source(gateway: Gateway, repo: str, path: Path) -> None:
    """Remember that ``repo`` was indexed from the local clone at ``path``."""
    gateway.write(RECORD, repo=repo, path=str(path.resolve()), now=datetime.now(UTC).isoformat())


def repository_git(gateway: Gateway, mirrors: Path | None) -> Locate:
    """A locator of repositories' git folders: registered path, mirror, local clone.

    Answers None when none of them exists on this machine (a reader then goes
    without blobs and says so, rather than reading some other folder).
    """
    lock = threading.Lock()
    seen: dict[str, tuple[float, Path | None]] = {}

    def locate(repository: str) -> Path | None:
        now = time.monotonic()
        with lock:
            hit = seen.get(repository)
        if hit is not None and now - hit[0] < TTL_S:
            return hit[1]
        rows = gateway.read(LOCATIONS, name=repository)
        row = rows[0] if rows else {}
        mirror = mirrors / f"{repository}.git" if mirrors is not None else None
        found = _first_existing(row.get("registered"), mirror, row.get("local"))
        with lock:
            seen[repository] = (now, found)
        return found

    return locate


def _first_existing(*candidates: str | Path | None) -> Path | None:
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return Path(candidate)
    return None


__all__ = ["Locate", "record_local_source", "repository_git"]

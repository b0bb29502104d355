"""The tree an index run reads: a commit's entries, which are indexed, its packages.

Listing Django's 6,890 entries with their sizes, choosing among them and reading
the manifests took ~50 ms of every push. A commit's tree never changes, so a
process keeps the last listing of each repository and ref (:class:`Listings`)
and the next run patches it with the diff to its commit: the few changed paths
are listed and judged again, the packages are read again only when a manifest
changed. A run without a kept listing, or whose diff is large, lists it all.
"""

from __future__ import annotations

import posixpath
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from strata.code.modules import MANIFESTS, PackageInfo, detect_packages, is_manifest
from strata.code.select import Selection, decide, selected
from strata.errors import GitError
from strata.git import Git, TreeEntry, readable_path

# Changed paths above which listing the whole tree is cheaper than patching.
MAX_PATCHED = 500
# Listings a process keeps (one per repository and ref, least recently used out).
MAX_LISTINGS = 8

Supported = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class Listing:
    """One commit's tree as an index run reads it. Never changed once built."""

    commit: str
    entries: tuple[TreeEntry, ...]  # every entry, in tree order
    reasons: dict[str, str | None]  # path -> why it is skipped (None: indexed)
    packages: tuple[PackageInfo, ...]

    def selection(self) -> Selection:
        """A new :class:`Selection` of the indexed entries (the caller may add to it)."""
        return selected(self.entries, self.reasons)


def list_tree(
    git: Git, sha: str, supported: Supported, max_bytes: int, previous: Listing | None = None
) -> Listing:
    """The listing of commit ``sha``: ``previous`` patched when it is of another
    commit of the same repository and few paths differ, else listed in full."""
    if previous is not None:
        if previous.commit == sha:
            return previous
        patched = _patched(git, previous, sha, supported, max_bytes)
        if patched is not None:
            return patched
    entries = tuple(git.tree(sha))
    reasons = {e.path: decide(e, supported, max_bytes) for e in entries}
    return Listing(sha, entries, reasons, _packages(git, entries))


def _patched(
    git: Git, previous: Listing, sha: str, supported: Supported, max_bytes: int
) -> Listing | None:
    try:
        changes = git.tree_changes(previous.commit, sha, limit=MAX_PATCHED)
    except GitError:
        return None  # the kept commit is gone from the mirror (a re-clone): list it all
    if changes is None:
        return None
    now, gone = changes
    by_path = {e.path: e for e in now}
    reasons = dict(previous.reasons)
    for path in gone:
        reasons.pop(path, None)
    added = [e for e in now if e.path not in reasons]
    for entry in now:
        reasons[entry.path] = decide(entry, supported, max_bytes)
    entries = [by_path.get(e.path, e) for e in previous.entries if e.path not in gone]
    if added:
        entries.extend(added)
        entries.sort(key=_tree_order)
    touched = gone | by_path.keys()
    if any(is_manifest(path) for path in touched):
        packages = _packages(git, entries)
    else:
        packages = previous.packages
    return Listing(sha, tuple(entries), reasons, packages)


def _tree_order(entry: TreeEntry) -> bytes:
    """Git's order of a recursive listing: the paths' bytes (a folder's entries sit
    where ``name/`` sorts among its siblings)."""
    return entry.path.encode(errors="surrogateescape")


def _read_as_manifest(path: str) -> bool:
    return posixpath.basename(path) in MANIFESTS or path.endswith(".csproj")


def _packages(git: Git, entries: Sequence[TreeEntry]) -> tuple[PackageInfo, ...]:
    """The packages the tree's manifests declare (no store holds a non-UTF-8 name)."""
    readable = [e for e in entries if readable_path(e.path)]
    wanted = [
        e
        for e in readable
        if _read_as_manifest(e.path)
        and not e.is_symlink
        and e.size < 1_000_000
        and "node_modules" not in e.path.split("/")
    ]
    manifests = {entry.path: data for entry, data in git.iter_blob_texts(wanted)}
    return tuple(detect_packages([e.path for e in readable], manifests))


class Listings:
    """The last :class:`Listing` of each repository and ref, for the runs of one process."""

    def __init__(self, limit: int = MAX_LISTINGS) -> None:
        self.limit = limit
        self._held: OrderedDict[tuple[str, str], Listing] = OrderedDict()

    def get(self, repo: str, ref: str) -> Listing | None:
        found = self._held.get((repo, ref))
        if found is not None:
            self._held.move_to_end((repo, ref))
        return found

    def keep(self, repo: str, ref: str, listing: Listing) -> None:
        self._held[(repo, ref)] = listing
        self._held.move_to_end((repo, ref))
        while len(self._held) > self.limit:
            self._held.popitem(last=False)

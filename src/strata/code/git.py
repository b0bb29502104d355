"""git plumbing for the indexer: every call an argument list, every sha validated.

Only what indexing needs: resolve revisions, read commit metadata, list a
tree, read many blobs in one process (``cat-file --batch``), diff two commits
with rename detection, and walk history.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from strata.errors import GitError

SHA_RE = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_SEP = "\x1f"


def valid_sha(value: str) -> bool:
    return bool(SHA_RE.match(value))


@dataclass(frozen=True, slots=True)
class CommitInfo:
    sha: str
    committed_at: datetime
    author: str
    message: str
    parents: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TreeEntry:
    path: str
    blob: str
    mode: str
    size: int

    @property
    def is_symlink(self) -> bool:
        return self.mode == "120000"

    @property
    def is_submodule(self) -> bool:
        return self.mode == "160000"


@dataclass(frozen=True, slots=True)
class Change:
    """One changed path between two commits (``R``: renamed from ``old_path``)."""

    status: str  # A, M, D, R, T, C
    path: str
    old_path: str | None = None


class Git:
    """A repository (bare or with a work tree) read through git plumbing."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _run(self, *args: str, input_bytes: bytes | None = None) -> bytes:
        try:
            done = subprocess.run(
                ["git", "-C", str(self.path), *args],
                input=input_bytes,
                capture_output=True,
                check=False,
                timeout=600,
            )
        except FileNotFoundError as exc:
            raise GitError("git is not installed", hint="install git") from exc
        if done.returncode != 0:
            message = done.stderr.decode(errors="replace").strip().splitlines()
            raise GitError(
                f"git {args[0]} failed in {self.path}: {message[-1] if message else 'error'}",
                command=args[0],
            )
        return done.stdout

    def check(self) -> None:
        """Fail clearly when the path is not a git repository."""
        if not self.path.exists():
            raise GitError(f"no such path: {self.path}", path=str(self.path))
        try:
            self._run("rev-parse", "--git-dir")
        except GitError as exc:
            raise GitError(
                f"not a git repository: {self.path}", hint="give the path of a git clone"
            ) from exc

    def resolve(self, rev: str) -> str:
        """The full sha of a commit-ish; a clear error when git cannot find it."""
        if rev.startswith("-"):
            raise GitError(f"refusing revision that looks like an option: {rev!r}")
        try:
            out = self._run(
                "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
            )
        except GitError as exc:
            raise GitError(
                f"git cannot resolve {rev!r} to a commit in {self.path}", revision=rev
            ) from exc
        sha = out.decode().strip()
        if not valid_sha(sha):
            raise GitError(f"unexpected rev-parse output for {rev!r}: {sha!r}")
        return sha

    def has_commit(self, sha: str) -> bool:
        if not valid_sha(sha):
            return False
        try:
            self._run("cat-file", "-e", f"{sha}^{{commit}}")
        except GitError:
            return False
        return True

    def commit(self, sha: str) -> CommitInfo:
        _require_sha(sha)
        fmt = _SEP.join(("%H", "%ct", "%an", "%P", "%B"))
        out = self._run("show", "-s", f"--format={fmt}", sha).decode(errors="replace")
        full, stamp, author, parents, message = out.split(_SEP, 4)
        return CommitInfo(
            sha=full.strip(),
            committed_at=datetime.fromtimestamp(int(stamp), tz=UTC),
            author=author,
            message=message.strip()[:2000],
            parents=tuple(parents.split()),
        )

    def tree(self, sha: str) -> list[TreeEntry]:
        """Every file of the commit's tree (recursively), with blob sizes."""
        _require_sha(sha)
        out = self._run("ls-tree", "-r", "-l", "-z", "--full-tree", sha)
        entries: list[TreeEntry] = []
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            mode, kind, blob, size = meta.decode().split(maxsplit=3)
            if kind not in ("blob", "commit"):
                continue
            entries.append(
                TreeEntry(
                    path=raw_path.decode(errors="surrogateescape"),
                    blob=blob,
                    mode=mode,
                    size=int(size) if size.strip().isdigit() else 0,
                )
            )
        return entries

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Read many blobs through one ``cat-file --batch`` process."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        for sha in wanted:
            _require_sha(sha)
        out = self._run("cat-file", "--batch", input_bytes=("\n".join(wanted) + "\n").encode())
        found: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].decode().split()
            pos = end + 1
            if len(header) < 3 or header[1] == "missing":
                raise GitError(f"blob {sha} is missing from {self.path}")
            size = int(header[2])
            found[sha] = out[pos : pos + size]
            pos += size + 1
        return found

    def diff(self, before: str, after: str) -> list[Change]:
        """Changed paths between two commits, with rename detection."""
        _require_sha(before)
        _require_sha(after)
        out = self._run("diff", "--name-status", "-M", "-z", before, after)
        parts = out.split(b"\0")
        changes: list[Change] = []
        i = 0
        while i < len(parts) and parts[i]:
            status = parts[i].decode()
            code = status[0]
            if code in ("R", "C"):
                old = parts[i + 1].decode(errors="surrogateescape")
                new = parts[i + 2].decode(errors="surrogateescape")
                changes.append(Change(code, new, old))
                i += 3
            else:
                changes.append(Change(code, parts[i + 1].decode(errors="surrogateescape")))
                i += 2
        return changes

    def history(
        self, ref: str, *, since: datetime | None = None, max_count: int | None = None
    ) -> list[str]:
        """First-parent commits reachable from ``ref``, oldest first."""
        sha = self.resolve(ref)
        args = ["rev-list", "--first-parent"]
        if since is not None:
            args.append(f"--since={int(since.timestamp())}")
        if max_count is not None:
            args.append(f"--max-count={max_count}")
        args.append(sha)
        shas = self._run(*args).decode().split()
        return list(reversed(shas))

    def is_ancestor(self, older: str, newer: str) -> bool:
        """True if ``older`` is reachable from ``newer`` (merged into it)."""
        _require_sha(older)
        _require_sha(newer)
        try:
            self._run("merge-base", "--is-ancestor", older, newer)
        except GitError:
            return False
        return True

    def commits_between(self, base: str, head: str, *, limit: int = 500) -> list[CommitInfo]:
        """Commits reachable from ``head`` but not ``base``, oldest first (at most ``limit``)."""
        _require_sha(base)
        _require_sha(head)
        shas = self._run("rev-list", f"--max-count={limit}", f"{base}..{head}").decode().split()
        return [self.commit(sha) for sha in reversed(shas)]

    def files_changed(self, sha: str) -> list[str]:
        """Paths a commit changed relative to its first parent (all paths for a root)."""
        _require_sha(sha)
        out = self._run("diff-tree", "--no-commit-id", "--root", "-r", "-z", "--name-only", sha)
        return [p.decode(errors="surrogateescape") for p in out.split(b"\0") if p]

    def iter_blob_texts(self, entries: Iterable[TreeEntry]) -> Iterator[tuple[TreeEntry, bytes]]:
        listed = list(entries)
        data = self.blobs(e.blob for e in listed)
        for entry in listed:
            yield entry, data[entry.blob]


def _require_sha(value: str) -> None:
    if not valid_sha(value):
        raise GitError(f"not a commit sha (40 or 64 hex characters): {value!r}")

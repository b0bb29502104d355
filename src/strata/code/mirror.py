"""Local copies of registered repositories: their own path, or a mirror clone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from strata.code.git import Git
from strata.errors import GitError

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def open_repository(name: str, *, url: str | None, path: str | None, mirrors: Path) -> Git:
    """A readable git repository for a registration, cloning or fetching a mirror."""
    if path:
        git = Git(Path(path))
        git.check()
        return git
    if not url:
        raise GitError(f"repository {name!r} has neither a local path nor a clone URL")
    if url.startswith("-") or not _SAFE_NAME.match(name):
        raise GitError(f"refusing unsafe repository name or URL for {name!r}")
    target = mirrors / f"{name}.git"
    mirrors.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        _git(["clone", "--mirror", "--quiet", "--", url, str(target)], what=f"clone {url}")
    else:
        _git(["-C", str(target), "remote", "update", "--prune"], what=f"fetch {url}")
    return Git(target)


def _git(args: list[str], *, what: str) -> None:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["error"]
        raise GitError(f"git could not {what}: {tail[0]}")

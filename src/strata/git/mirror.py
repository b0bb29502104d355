"""Local copies of registered repositories: their own path, or a mirror clone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from strata import logs
from strata.errors import GitError
from strata.git.repo import Git
from strata.git.runner import run_git

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_MIRROR_TIMEOUT_S: Final = 1800.0
_log = logs.get("git.mirror")


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
    _log.info("mirror update", repo=name, mirror=str(target), cloning=not target.exists())
    if not target.exists():
        run_git(
            "clone",
            "--mirror",
            "--quiet",
            "--",
            url,
            str(target),
            timeout=_MIRROR_TIMEOUT_S,
            what=f"clone the repository {name!r}",
        )
    else:
        run_git(
            "remote",
            "update",
            "--prune",
            repo=target,
            timeout=_MIRROR_TIMEOUT_S,
            what=f"fetch the repository {name!r}",
        )
    return Git(target)

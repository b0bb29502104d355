"""Local copies of registered repositories: their own path, or a mirror clone.

A push can name a commit the mirror (or a registered clone) does not hold yet:
the webhook raced the host's own replication, or the delivery names a commit
that never existed. :func:`open_repository` given the commit it needs fetches
again a few times, backing off, and then fails with a typed
:class:`~strata.errors.CommitNotFound`. A shallow mirror (someone cloned it with
``--depth``) is deepened to the whole history first: ancestry decides between
an incremental run and a rewind, and a cut-off history would read as a rewind.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from strata import logs
from strata.errors import CommitNotFound, GitError
from strata.git.names import valid_sha
from strata.git.repo import Git
from strata.git.runner import run_git

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_MIRROR_TIMEOUT_S: Final = 1800.0
# Seconds to wait before each further look for a commit a push named (then fail):
# hosts replicate within a second or two; a commit still missing after this is
# not coming.
REFETCH_DELAYS_S: Final = (1.0, 2.0, 4.0)
_log = logs.get("git.mirror")


def open_repository(
    name: str,
    *,
    url: str | None,
    path: str | None,
    mirrors: Path,
    want: str | None = None,
    delays: Sequence[float] = REFETCH_DELAYS_S,
) -> Git:
    """A readable git repository for a registration, cloning or fetching a mirror.

    ``want`` is a commit the caller is about to read (a push's ``after``): when
    the repository does not hold it, the mirror is fetched again (a registered
    path is looked at again) after each of ``delays``; still missing, it is a
    CommitNotFound, before anything was read or written.
    """
    if path:
        git = Git(Path(path))
        git.check()
        _await_commit(git, want, delays, refresh=lambda: None)
        return git
    if not url:
        raise GitError(f"repository {name!r} has neither a local path nor a clone URL")
    if url.startswith("-") or not _SAFE_NAME.match(name):
        raise GitError(f"refusing unsafe repository name or URL for {name!r}")
    target = mirrors / f"{name}.git"
    mirrors.mkdir(parents=True, exist_ok=True)
    git = Git(target, mirror=True)
    if not target.exists():
        _log.info("mirror clone", repo=name, mirror=str(target))
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
        _fetch(git, name)
    _unshallow(git, name)
    _await_commit(git, want, delays, refresh=lambda: _fetch(git, name))
    return git


def _fetch(git: Git, name: str) -> None:
    _log.info("mirror update", repo=name, mirror=str(git.path))
    git.check()  # a mirror removed on the server says so, not "not a git repository"
    try:
        run_git(
            "remote",
            "update",
            "--prune",
            repo=git.path,
            timeout=_MIRROR_TIMEOUT_S,
            what=f"fetch the repository {name!r}",
        )
    except GitError:
        git.check()  # removed while git was fetching into it: say that, not git's words
        raise


def _unshallow(git: Git, name: str) -> None:
    """Deepen a shallow mirror to the remote's whole history (a no-op when complete)."""
    if not (git.path / "shallow").exists():  # how git marks a shallow (bare) repository
        return
    _log.info("mirror unshallow", repo=name, mirror=str(git.path))
    run_git(
        "fetch",
        "--unshallow",
        "--quiet",
        "origin",
        repo=git.path,
        timeout=_MIRROR_TIMEOUT_S,
        what=f"fetch the whole history of the repository {name!r} (its mirror was shallow)",
    )


def _await_commit(
    git: Git, want: str | None, delays: Sequence[float], *, refresh: Callable[[], None]
) -> None:
    if want is None or not valid_sha(want) or git.has_commit(want):
        return
    for attempt, delay in enumerate(delays, start=1):
        _log.info("commit not there yet", commit=want, attempt=attempt, wait_s=delay)
        time.sleep(delay)
        refresh()
        if git.has_commit(want):
            return
    git.check()
    raise CommitNotFound(
        f"commit {want[:12]} is not in the repository (looked {len(delays) + 1} times "
        f"over {sum(delays):g} s{', fetching each time' if git.mirror else ''})",
        hint="push the commit to the host first (a webhook that came before it is "
        "answered by the next push), or send an existing sha",
        commit=want,
    )

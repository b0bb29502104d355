"""The one way Strata runs git: an argument list, a timeout, typed errors.

Every git command of the process goes through :func:`run_git` (or
:func:`git_succeeds` where the exit status is the answer). Failures become
:class:`~strata.errors.GitError` with a message a client may see: it never
names a server path (the repository is "the repository's mirror"); the path
and git's own words travel in structured log fields instead.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from strata import logs
from strata.errors import GitError

DEFAULT_TIMEOUT_S: Final = 600.0
_ABSOLUTE_PATH = re.compile(r"(?<![\w.])/(?:[^\s'\"/:]+/?)+")
_log = logs.get("git")


@dataclass(frozen=True, slots=True)
class GitResult:
    """A finished git command: its exit status and raw output."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _spawn(
    args: Sequence[str], *, repo: Path | None, input_bytes: bytes | None, timeout: float
) -> GitResult:
    argv = ["git", *(("-C", str(repo)) if repo is not None else ()), *args]
    command = args[0] if args else "git"
    try:
        done = subprocess.run(
            argv, input=input_bytes, capture_output=True, check=False, timeout=timeout
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed", hint="install git") from exc
    except subprocess.TimeoutExpired as exc:
        _log.warning("git timed out", command=command, repo=str(repo), timeout_s=timeout)
        raise GitError(f"git {command} timed out after {timeout:g}s", command=command) from exc
    return GitResult(done.returncode, done.stdout, done.stderr)


def public_text(text: str, repo: Path | None = None) -> str:
    """``text`` with server filesystem paths replaced, fit for a client to read."""
    if repo is not None:
        text = text.replace(str(repo), "the repository's mirror")
    return _ABSOLUTE_PATH.sub("<path>", text)


def run_git(
    *args: str,
    repo: Path | None = None,
    input_bytes: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    what: str | None = None,
) -> bytes:
    """Run ``git [-C repo] args`` and return its stdout; a GitError when it fails.

    ``what`` names the action for the error message ("fetch the mirror");
    by default it is the git subcommand.
    """
    done = _spawn(args, repo=repo, input_bytes=input_bytes, timeout=timeout)
    if done.ok:
        return done.stdout
    command = args[0] if args else "git"
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    last = lines[-1] if lines else "error"
    _log.info(
        "git failed",
        command=command,
        repo=str(repo) if repo is not None else None,
        returncode=done.returncode,
        stderr=last[:500],
    )
    raise GitError(
        f"git could not {what or command}: {public_text(last, repo)[:300]}",
        command=command,
    )


def git_succeeds(*args: str, repo: Path | None = None, timeout: float = 60.0) -> bool:
    """True if ``git [-C repo] args`` exits 0 (for commands whose status is the answer)."""
    return _spawn(args, repo=repo, input_bytes=None, timeout=timeout).ok

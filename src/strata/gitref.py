"""Validate shas and refs before they reach a git command (argument lists, never a shell).

Anything that arrives from outside (a webhook payload, a GraphQL argument)
passes through :func:`valid_sha` and :func:`check_ref` first.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Final

from strata.errors import GitError, ValidationError
from strata.jobs import SHA_PATTERN, ZERO_SHAS

_SHA = re.compile(SHA_PATTERN)
MAX_REF_LENGTH: Final = 255
_GIT_TIMEOUT_S: Final = 10.0


def valid_sha(value: object) -> bool:
    """A full lowercase sha-1 (40 hex) or sha-256 (64 hex) object name."""
    return isinstance(value, str) and _SHA.fullmatch(value) is not None


def is_zero_sha(value: str) -> bool:
    """The all-zero sha git hosts send for "no commit" (branch created or deleted)."""
    return value in ZERO_SHAS


def require_sha(value: object, *, what: str = "sha") -> str:
    if not valid_sha(value):
        raise ValidationError(
            f"{what} is not a 40- or 64-character lowercase hex object name",
            hint="send the full commit sha",
            field=what,
        )
    return str(value)


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", *args],
            capture_output=True,
            check=False,
            timeout=_GIT_TIMEOUT_S,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed", hint="install git") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError("git timed out", command=" ".join(args[:3])) from exc


def check_ref(ref: object) -> str:
    """Return ``ref`` if it is a full ref (``refs/...``) that ``git check-ref-format`` accepts."""
    if not isinstance(ref, str) or not ref:
        raise ValidationError("ref must be a non-empty string", field="ref")
    if len(ref) > MAX_REF_LENGTH:
        raise ValidationError(f"ref is longer than {MAX_REF_LENGTH} characters", field="ref")
    # NUL cannot travel in an argument list; a leading dash would read as an option.
    if not ref.startswith("refs/") or "\x00" in ref:
        raise ValidationError(
            f"not a full ref: {ref[:80]!r}",
            hint="expected refs/heads/... or refs/tags/...",
            field="ref",
        )
    if _git("check-ref-format", ref).returncode != 0:
        raise ValidationError(
            f"git check-ref-format refuses {ref[:80]!r}", field="ref", ref=ref[:MAX_REF_LENGTH]
        )
    return ref


def branch_ref(name_or_ref: str) -> str:
    """``main`` -> ``refs/heads/main``; a full ref is kept; the result is checked."""
    if name_or_ref.startswith("-"):  # git refuses such branch names too
        raise ValidationError(f"not a branch name: {name_or_ref[:80]!r}", field="ref")
    ref = name_or_ref if name_or_ref.startswith("refs/") else f"refs/heads/{name_or_ref}"
    return check_ref(ref)


def resolve_commit(repo_path: Path, ref: str) -> str:
    """The full sha ``ref`` names in the git repository at ``repo_path``."""
    check_ref(ref)
    done = _git(
        "-C",
        str(repo_path),
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{ref}^{{commit}}",
    )
    sha = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not valid_sha(sha):
        raise GitError(
            f"git cannot resolve {ref!r} to a commit in the registered repository",
            hint="push the ref first, or pass `after` explicitly",
            ref=ref,
        )
    return sha

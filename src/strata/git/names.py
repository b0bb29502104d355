"""Validate shas and refs before they reach a git command.

Anything that arrives from outside (a webhook payload, a GraphQL argument, a
job) passes through :func:`valid_sha` / :func:`require_sha` and
:func:`check_ref` first; git itself then only ever sees checked names.
"""

from __future__ import annotations

import re
from typing import Final

from strata.errors import GitError, ValidationError
from strata.git.runner import git_succeeds
from strata.jobs import SHA_PATTERN, ZERO_SHAS

_SHA = re.compile(SHA_PATTERN)
MAX_REF_LENGTH: Final = 255
_CHECK_REF_TIMEOUT_S: Final = 10.0


def valid_sha(value: object) -> bool:
    """A full lowercase sha-1 (40 hex) or sha-256 (64 hex) object name."""
    return isinstance(value, str) and _SHA.fullmatch(value) is not None


def readable_path(path: str) -> bool:
    """True if a path git listed is text the graph can store.

    git keeps a file name's bytes as they were committed; Strata decodes them as
    UTF-8 with surrogate escapes, so a name in another encoding arrives holding
    lone surrogates, which no UTF-8 store (Neo4j, JSON) can carry.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_zero_sha(value: str) -> bool:
    """The all-zero sha git hosts send for "no commit" (branch created or deleted)."""
    return value in ZERO_SHAS


def require_sha(value: object, *, what: str = "sha") -> str:
    """``value`` if it is a full sha, else a ValidationError naming the field ``what``."""
    if not valid_sha(value):
        raise ValidationError(
            f"{what} is not a 40- or 64-character lowercase hex object name",
            hint="send the full commit sha",
            field=what,
        )
    return str(value)


def require_commit_sha(value: str) -> str:
    """``value`` if it is a full sha, else a GitError (a caller's sha, checked before git)."""
    if not valid_sha(value):
        raise GitError(f"not a commit sha (40 or 64 hex characters): {value[:80]!r}")
    return value


def check_revision(rev: str) -> str:
    """A revision for rev-parse: refused when git would read it as an option."""
    if rev.startswith("-") or "\x00" in rev:
        raise GitError(f"refusing revision that looks like an option: {rev[:80]!r}")
    return rev


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
    if not git_succeeds("check-ref-format", ref, timeout=_CHECK_REF_TIMEOUT_S):
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

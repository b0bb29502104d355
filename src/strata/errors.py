"""The one error hierarchy of Strata.

Every failure the core reports is a :class:`StrataError` with a stable ``code``
and structured ``details``. The edges translate them once: the GraphQL error
formatter, the HTTP layer (``http_status``) and the Celery retry policy
(``retryable``). The core never raises framework exceptions.
"""

from __future__ import annotations

from typing import Any, ClassVar


class StrataError(Exception):
    """Root of every error Strata raises on purpose."""

    code: ClassVar[str] = "strata_error"
    http_status: ClassVar[int] = 500
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, hint: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details: dict[str, Any] = details

    def __str__(self) -> str:
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description, for logs, job records and API errors."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        if self.details:
            out["details"] = {k: _jsonable(v) for k, v in self.details.items()}
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


class ConfigError(StrataError):
    """Settings are missing, unsafe or contradictory."""

    code = "config_error"


class EnvironmentProblem(StrataError):
    """A tool or port the local stack needs is missing or taken."""

    code = "environment_problem"


class ValidationError(StrataError):
    """Input broke a rule; nothing was written."""

    code = "validation_error"
    http_status = 400


class OntologyViolation(ValidationError):
    """A write broke the ontology contract; the whole batch was refused."""

    code = "ontology_violation"


class TemporalError(ValidationError):
    """A time was naive, inverted or otherwise unusable."""

    code = "temporal_error"


class NotFound(StrataError):
    """The thing asked for does not exist (or is not visible to the caller)."""

    code = "not_found"
    http_status = 404


class MigrationError(StrataError):
    """Migrations are inconsistent with what the graph recorded."""

    code = "migration_error"


class DatabaseUnavailable(StrataError):
    """Neo4j cannot be reached; worth retrying."""

    code = "database_unavailable"
    http_status = 503
    retryable = True


class DatabaseAuthError(StrataError):
    """Neo4j refused the credentials."""

    code = "database_auth_error"
    http_status = 503


class DatabaseError(StrataError):
    """Neo4j rejected a statement (a bug, or a constraint)."""

    code = "database_error"


class TransientDatabaseError(DatabaseUnavailable):
    """A deadlock or leader switch; the transaction may be retried as a whole."""

    code = "transient_database_error"


class GitError(StrataError):
    """git refused a command, or a commit/ref does not resolve."""

    code = "git_error"
    http_status = 400


class CommitNotFound(GitError):
    """A commit (a push's ``after``, a revision) is not in the repository, even after
    fetching it again: the push came before its commit, or names one that never was."""

    code = "commit_not_found"


class Unauthorized(StrataError):
    """Missing or bad credentials."""

    code = "unauthorized"
    http_status = 401


class Forbidden(StrataError):
    """The credentials are good but lack the scope or repository."""

    code = "forbidden"
    http_status = 403

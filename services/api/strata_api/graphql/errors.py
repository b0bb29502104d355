"""Errors translated once, at the GraphQL edge: every error carries ``extensions.code``.

- a :class:`~strata.errors.StrataError` keeps its message and hint, with its
  ``code`` upper-cased (``FORBIDDEN``, ``NOT_FOUND``, ``VALIDATION_ERROR``, ...);
- a document that does not parse is ``GRAPHQL_PARSE_FAILED``; one refused by a
  validation rule or a limit is ``GRAPHQL_VALIDATION_FAILED``; a variable that
  is missing or cannot be coerced to its type is ``BAD_USER_INPUT`` (nothing ran);
- anything else is ``INTERNAL_SERVER_ERROR``, and outside development its
  message is replaced, so internals (Cypher, paths, addresses) never leak.
  Server-side StrataErrors (5xx) are masked the same way.

Logging (:func:`log_error`, called once per error by the schema): a client
error is one structured line without a traceback, so any key holder cannot
grow the log by kilobytes per request; an internal error keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import structlog
from graphql import GraphQLError, GraphQLSyntaxError, VariableDefinitionNode
from strawberry.extensions import SchemaExtension

from strata.errors import DatabaseError, StrataError
from strata.settings import Settings

log = structlog.get_logger(component="graphql")

INTERNAL = "INTERNAL_SERVER_ERROR"
BAD_USER_INPUT = "BAD_USER_INPUT"
MASKED_MESSAGE = "Internal server error"


class RequestTimeout(StrataError):
    """The request used up its time budget (``STRATA_REQUEST_TIMEOUT_S``)."""

    code = "timeout"
    http_status = 504
    public = True


def _public(exc: StrataError) -> bool:
    """Server-side errors whose message we wrote ourselves and may show (``public = True``)."""
    return bool(getattr(exc, "public", False))


def error_code(exc: StrataError) -> str:
    return exc.code.upper()


def request_timeout(settings: Settings) -> RequestTimeout:
    return RequestTimeout(
        f"the request exceeded its time budget of {settings.request_timeout_s:g} s",
        hint="ask for less",
    )


def timed_out(exc: DatabaseError, settings: Settings) -> StrataError:
    """Neo4j ended the transaction at our timeout: that is the request's budget."""
    if "TransactionTimedOut" in str(exc.details.get("gql_status") or ""):
        return request_timeout(settings)
    return exc


def timeout_error(settings: Settings) -> GraphQLError:
    message, extensions = client_view(request_timeout(settings), expose_internal=False)
    return GraphQLError(message, extensions=extensions)


def client_view(exc: StrataError, *, expose_internal: bool) -> tuple[str, dict[str, Any]]:
    """What a client sees of a StrataError, in GraphQL and in plain HTTP answers alike:
    its code, and its message and hint unless it is a server-side error (5xx) that is
    not ``public`` and internals are not exposed (development)."""
    extensions: dict[str, Any] = {"code": error_code(exc)}
    if exc.http_status >= 500 and not expose_internal and not _public(exc):
        return (MASKED_MESSAGE if exc.http_status == 500 else "Service unavailable"), extensions
    if exc.hint:
        extensions["hint"] = exc.hint
    return exc.message, extensions


def classify(error: GraphQLError) -> tuple[str, bool]:
    """(the code a client sees, whether it is our fault and worth a traceback)."""
    if error.extensions and "code" in error.extensions:
        return str(error.extensions["code"]), False
    original = error.original_error
    if isinstance(original, StrataError):
        return error_code(original), original.http_status >= 500 and not _public(original)
    if error.path is None:
        if _is_variable_error(error):
            return BAD_USER_INPUT, False
        if original is None:
            if isinstance(error, GraphQLSyntaxError):
                return "GRAPHQL_PARSE_FAILED", False
            return "GRAPHQL_VALIDATION_FAILED", False
    return INTERNAL, True


def _is_variable_error(error: GraphQLError) -> bool:
    """graphql-core reports a variable it cannot coerce (missing, wrong type) at its
    definition, before anything executes: the client's mistake, as the same value
    written as a literal would be a validation error."""
    nodes = error.nodes or []
    return bool(nodes) and all(isinstance(n, VariableDefinitionNode) for n in nodes)


def log_error(error: GraphQLError) -> None:
    """One structured line per client error; internal errors keep their traceback."""
    code, internal = classify(error)
    path = list(error.path) if error.path else None
    if internal:
        original = error.original_error
        log.error(
            "graphql.internal_error",
            code=code,
            path=path,
            error=repr(original or error),
            exc_info=original if original is not None else False,
        )
    else:
        log.info("graphql.client_error", code=code, path=path, message=error.message[:300])


def translate(error: GraphQLError, *, expose_internal: bool) -> GraphQLError:
    """The client-facing form of one error (see the module docstring)."""
    if error.extensions and "code" in error.extensions:
        return error
    original = error.original_error
    code, internal = classify(error)
    extensions: dict[str, Any] = {"code": code}
    message = error.message
    if isinstance(original, StrataError):
        message, extensions = client_view(original, expose_internal=expose_internal)
    elif internal and not expose_internal:
        message = MASKED_MESSAGE
    return GraphQLError(
        message,
        nodes=error.nodes,
        source=error.source,
        positions=error.positions,
        path=error.path,
        original_error=None,
        extensions=extensions,
    )


class ErrorTranslation(SchemaExtension):
    """Rewrite the errors of every result with :func:`translate`."""

    def __init__(self, *, expose_internal: bool) -> None:
        self.expose_internal = expose_internal

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        errors = getattr(result, "errors", None)
        if result is not None and errors:
            result.errors = [translate(e, expose_internal=self.expose_internal) for e in errors]

"""Errors translated once, at the GraphQL edge: every error carries ``extensions.code``.

- a :class:`~strata.errors.StrataError` keeps its message and hint, with its
  ``code`` upper-cased (``FORBIDDEN``, ``NOT_FOUND``, ``VALIDATION_ERROR``, ...);
- a document that does not parse is ``GRAPHQL_PARSE_FAILED``; one refused by a
  validation rule or a limit is ``GRAPHQL_VALIDATION_FAILED`` (nothing ran);
- anything else is ``INTERNAL_SERVER_ERROR``, and outside development its
  message is replaced, so internals (Cypher, paths, addresses) never leak.
  Server-side StrataErrors (5xx) are masked the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import structlog
from graphql import GraphQLError, GraphQLSyntaxError
from strawberry.extensions import SchemaExtension

from strata.errors import StrataError
from strata.settings import Settings

log = structlog.get_logger(component="graphql")

INTERNAL = "INTERNAL_SERVER_ERROR"
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


def translate(error: GraphQLError, *, expose_internal: bool) -> GraphQLError:
    """The client-facing form of one error (see the module docstring)."""
    if error.extensions and "code" in error.extensions:
        return error
    original = error.original_error
    extensions: dict[str, Any]
    message = error.message
    if isinstance(original, StrataError):
        message, extensions = client_view(original, expose_internal=expose_internal)
    elif original is None and error.path is None:
        code = "GRAPHQL_PARSE_FAILED" if isinstance(error, GraphQLSyntaxError) else None
        extensions = {"code": code or "GRAPHQL_VALIDATION_FAILED"}
    else:
        extensions = {"code": INTERNAL}
        log.error("graphql.internal_error", path=error.path, error=repr(original or error))
        if not expose_internal:
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

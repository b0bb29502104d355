"""No silent empties: every empty or null answer says why, in ``extensions.reasons``.

A resolver whose read found nothing calls :func:`say_why`; it asks the core
(:func:`strata.graph.absence.explain`, one round trip, only on empty answers)
and records the reason for the field's path. :class:`ReasonsExtension` adds the
recorded reasons to the response::

    {"data": {"callers": []},
     "extensions": {"reasons": [{"path": ["callers"], "code": "BEFORE_HISTORY",
        "message": "... before the first indexed commit of 'shop' (...)",
        "firstIndexedAt": "2024-01-02T10:00:00+00:00"}]}}

The data keeps its shape (null, ``[]``, an empty page), so clients that only
read ``data`` keep working, and an empty list without a reason is a true
"none". A malformed id is different: it is bad input, refused with a
``VALIDATION_ERROR`` before anything is read (:func:`checked_key`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from strawberry.extensions import SchemaExtension

from strata.errors import NotFound, StrataError
from strata.graph.absence import check_key, explain
from strata.temporal import AsOf
from strata_api.graphql.context import Info
from strata_api.graphql.errors import client_view

T = TypeVar("T")

# Calls start and end at symbols, and at files for module-level code.
CALL_ENDS = ("Symbol", "File")


def checked_key(info: Info, key: str, labels: str | tuple[str, ...] = CALL_ENDS) -> tuple[str, str]:
    """(repository, label) of ``key``; a ValidationError (a GraphQL error) when it is malformed."""
    return check_key(info.context.ontology, labels, key)


async def say_why(
    info: Info,
    repo: str,
    as_of: AsOf | None = None,
    *,
    label: str = "Symbol",
    key: str | None = None,
    readable: bool = True,
    otherwise: StrataError | None = None,
) -> None:
    """Record why this field's read of ``repo`` (entity ``key``) came back empty.

    ``otherwise`` (if given) is the reason when the core finds nothing wrong with
    the question (a field that reads one thing passes :func:`missing`); without
    it, an empty list is then the true answer (the symbol exists and has no callers).
    """
    context = info.context
    when = as_of or AsOf.at()
    reason = await context.run(
        explain, context.gateway, repo, when, label=label, key=key, readable=readable
    )
    reason = reason or otherwise
    if reason is not None:
        record(info, reason)


async def read_or_say_why(
    info: Info,
    repo: str,
    as_of: AsOf,
    read: Callable[[], Awaitable[T]],
    *,
    label: str = "Symbol",
    key: str | None = None,
    one: bool = False,
) -> T | None:
    """``await read()`` when the caller may read ``repo`` (else None); when the answer is
    empty, :func:`say_why`. ``one``: the read is of one entity, so it is always missing
    for a reason."""
    readable = info.context.principal.can_read(repo)
    found = await read() if readable else None
    if not found:
        otherwise = missing(label, key, as_of) if one and key is not None else None
        await say_why(
            info, repo, as_of, label=label, key=key, readable=readable, otherwise=otherwise
        )
    return found


def missing(label: str, key: str, as_of: AsOf) -> NotFound:
    """The reason a read of one entity is null when its repository and the moment are fine."""
    return NotFound(f"no {label.lower()} {key!r} as of {as_of.valid_at.isoformat()}")


def record(info: Info, reason: StrataError) -> None:
    """Add ``reason`` for the current field to the response's ``extensions.reasons``."""
    context = info.context
    message, extensions = client_view(reason, expose_internal=context.settings.is_development)
    entry: dict[str, Any] = {"path": info.path.as_list(), **extensions, "message": message}
    first = reason.details.get("first_indexed_at")
    if first is not None:
        entry["firstIndexedAt"] = first
        entry["axis"] = reason.details.get("axis")
    context.reasons.append(entry)


class ReasonsExtension(SchemaExtension):
    """Put the reasons the resolvers recorded into the result's ``extensions``."""

    def on_operation(self) -> Iterator[None]:
        yield

    def get_results(self) -> dict[str, Any]:
        reasons = getattr(self.execution_context.context, "reasons", None)
        return {"reasons": list(reasons)} if reasons else {}

"""The GraphQL route: POST-only JSON, parsed strictly, executed under the request's budget.

A body strawberry's parser would crash on (not UTF-8, JSON that is not an
object, nesting deep enough to exhaust the recursion limit) is answered 400
with a GraphQL-style error body (``extensions.code = BAD_REQUEST``), as are
strawberry's own transport refusals (batching, a non-string ``query``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

# strawberry's transport errors (its dependency, pinned in constraints.txt).
from cross_web import HTTPException
from strawberry.fastapi import GraphQLRouter
from strawberry.types import ExecutionResult

from strata.errors import StrataError
from strata_api.graphql.context import Context
from strata_api.graphql.errors import timeout_error

MAX_JSON_DEPTH = 32
"""Nesting a GraphQL request body may have (variables included); real ones need a few."""


class BadRequest(StrataError):
    """The HTTP body is not a GraphQL request (``{"query": ..., "variables": {...}}``)."""

    code = "bad_request"
    http_status = 400


def decode_request(data: str | bytes) -> dict[str, Any] | list[Any]:
    """A request body as JSON, or BadRequest saying what is wrong with it."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text)
    except UnicodeDecodeError as exc:
        raise BadRequest("the request body is not valid UTF-8") from exc
    except json.JSONDecodeError as exc:
        raise BadRequest(f"the request body is not JSON ({exc.msg} at {exc.pos})") from exc
    except RecursionError as exc:
        raise BadRequest(f"the request body nests deeper than {MAX_JSON_DEPTH} levels") from exc
    if not isinstance(value, dict | list):
        raise BadRequest(
            'the request body must be a JSON object: {"query": "...", "variables": {...}}'
        )
    if _depth(value) > MAX_JSON_DEPTH:
        raise BadRequest(f"the request body nests deeper than {MAX_JSON_DEPTH} levels")
    return value


def _depth(value: object) -> int:
    """Nesting of a decoded JSON value, without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[Any] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


class StrataGraphQLRouter(GraphQLRouter[Context, None]):
    """POST-only GraphQL whose execution is bounded by the request's time budget."""

    def decode_json(self, data: str | bytes) -> object:
        return decode_request(data)

    async def parse_http_body(self, request: Any) -> Any:
        try:
            return await super().parse_http_body(request)
        except HTTPException as exc:
            # strawberry answers these in plain text; clients get the GraphQL error shape.
            raise BadRequest(str(exc.reason)) from exc

    async def execute_operation(  # type: ignore[override]
        self,
        *,
        request: Any,
        request_adapter: Any,
        request_data: Any,
        context: Context,
        root_value: Any,
        sub_response: Any,
    ) -> Any:
        try:
            async with asyncio.timeout(context.deadline_remaining()):
                return await super().execute_operation(
                    request=request,
                    request_adapter=request_adapter,
                    request_data=request_data,
                    context=context,
                    root_value=root_value,
                    sub_response=sub_response,
                )
        except TimeoutError:
            return ExecutionResult(data=None, errors=[timeout_error(context.settings)])
        except HTTPException as exc:  # no query, an operation type POST does not allow
            raise BadRequest(str(exc.reason)) from exc

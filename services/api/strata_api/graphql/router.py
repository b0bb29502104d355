"""The GraphQL route: POST-only, executed under the request's time budget."""

from __future__ import annotations

import asyncio
from typing import Any

from strawberry.fastapi import GraphQLRouter
from strawberry.types import ExecutionResult

from strata_api.graphql.context import Context
from strata_api.graphql.errors import timeout_error


class StrataGraphQLRouter(GraphQLRouter[Context, None]):
    """POST-only GraphQL whose execution is bounded by the request's time budget."""

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

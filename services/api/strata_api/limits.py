"""Hardening of the HTTP and GraphQL edge: body caps, document limits, cost, timeout.

Every GraphQL document is checked before anything executes: size of the body
(:class:`BodyLimit`, 413), tokens (strawberry's ``MaxTokensLimiter``), depth
(``QueryDepthLimiter``, which also survives circular fragments), aliases
(``MaxAliasesLimiter``), and our :class:`CostLimiter`, which multiplies by the
page sizes a query asks for. Execution then runs under the request's time
budget (:class:`StrataGraphQLRouter`), and resolvers pass what is left of it to
Neo4j so the database aborts the transaction too.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
    get_named_type,
    get_nullable_type,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.extensions import (
    DisableIntrospection,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    QueryDepthLimiter,
    SchemaExtension,
)
from strawberry.fastapi import GraphQLRouter
from strawberry.schema.schema import validate_document
from strawberry.types import ExecutionResult

from strata.settings import Settings
from strata_api.graphql.context import Context
from strata_api.graphql.errors import ErrorTranslation, timeout_error

PAGE_ARGUMENTS = ("first", "last", "limit")
ExtensionFactory = Callable[[], SchemaExtension]


@dataclass(frozen=True, slots=True)
class Limits:
    """The GraphQL limits in force; defaults equal the settings' defaults."""

    max_depth: int = 10
    max_aliases: int = 15
    max_tokens: int = 2000
    max_cost: int = 5000
    default_page_size: int = 10
    max_page_size: int = 100
    development: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            max_depth=settings.graphql_max_depth,
            max_aliases=settings.graphql_max_aliases,
            max_tokens=settings.graphql_max_tokens,
            max_cost=settings.graphql_max_cost,
            default_page_size=settings.graphql_default_page_size,
            max_page_size=max(settings.graphql_max_page_size, settings.graphql_default_page_size),
            development=settings.is_development,
        )


def hardening_extensions(limits: Limits) -> list[ExtensionFactory]:
    """Per-request factories (never shared instances) for the schema's extensions."""
    factories: list[ExtensionFactory] = [
        partial(ErrorTranslation, expose_internal=limits.development),
        partial(MaxTokensLimiter, max_token_count=limits.max_tokens),
        partial(QueryDepthLimiter, max_depth=limits.max_depth),
        partial(MaxAliasesLimiter, max_alias_count=limits.max_aliases),
        partial(CostLimiter, limits=limits, cache=ValidationCache()),
    ]
    if not limits.development:
        factories.insert(1, DisableIntrospection)
    return factories


# -- cost -------------------------------------------------------------------------------


class _TooCostly(Exception):
    pass


class _CostWalk:
    """Cost of one operation: every field costs 1 times the page sizes above it.

    A field with a ``first``/``last``/``limit`` argument multiplies what it
    selects by that argument (its default, or the default page size, when
    absent); a list of objects without one by the default page size.
    Introspection fields are free (bounded by the schema; off in production).
    """

    def __init__(
        self,
        schema: GraphQLSchema,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: Mapping[str, Any],
        limits: Limits,
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.limits = limits
        self.cost = 0
        self.errors: list[GraphQLError] = []

    def page_size(self, node: FieldNode, field: GraphQLField) -> int:
        for name in PAGE_ARGUMENTS:
            if name not in field.args:
                continue
            value = _argument_value(node, name, self.variables)
            if value is None:
                default = field.args[name].default_value
                value = (
                    default
                    if isinstance(default, int) and not isinstance(default, bool)
                    else self.limits.default_page_size
                )
            if not 0 <= value <= self.limits.max_page_size:
                self.errors.append(
                    GraphQLError(
                        f"argument '{name}' of '{node.name.value}' must be between 0 and "
                        f"{self.limits.max_page_size} (got {value})",
                        nodes=[node],
                    )
                )
                value = self.limits.max_page_size
            return max(value, 1)
        if isinstance(get_nullable_type(field.type), GraphQLList):
            return self.limits.default_page_size
        return 1

    def walk(
        self,
        selection_set: SelectionSetNode,
        parent: GraphQLNamedType | None,
        multiplier: int,
        spreading: frozenset[str],
    ) -> None:
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                self.field(selection, parent, multiplier, spreading)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                target = self.schema.get_type(condition.name.value) if condition else parent
                self.walk(selection.selection_set, target, multiplier, spreading)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                fragment = self.fragments.get(name)
                if fragment is None or name in spreading:  # cycles: refused by validation
                    continue
                target = self.schema.get_type(fragment.type_condition.name.value)
                self.walk(fragment.selection_set, target, multiplier, spreading | {name})

    def field(
        self,
        node: FieldNode,
        parent: GraphQLNamedType | None,
        multiplier: int,
        spreading: frozenset[str],
    ) -> None:
        if node.name.value.startswith("__"):
            return
        if not isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            return
        field = parent.fields.get(node.name.value)
        if field is None:
            return
        self.cost += multiplier
        if self.cost > self.limits.max_cost:
            raise _TooCostly
        if node.selection_set is not None:
            child = get_named_type(field.type)
            self.walk(
                node.selection_set, child, multiplier * self.page_size(node, field), spreading
            )


def _argument_value(node: FieldNode, name: str, variables: Mapping[str, Any]) -> int | None:
    for argument in node.arguments or ():
        if argument.name.value != name:
            continue
        value = argument.value
        if isinstance(value, IntValueNode):
            return int(value.value)
        if isinstance(value, VariableNode):
            raw = variables.get(value.name.value)
            if isinstance(raw, int) and not isinstance(raw, bool):
                return raw
        return None
    return None


def operation_cost_errors(
    schema: GraphQLSchema,
    document: DocumentNode,
    variables: Mapping[str, Any] | None,
    limits: Limits,
) -> list[GraphQLError]:
    """Validation errors for page arguments out of range and operations over the cost cap."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    errors: list[GraphQLError] = []
    for operation in document.definitions:
        if not isinstance(operation, OperationDefinitionNode):
            continue
        root = schema.get_root_type(operation.operation)
        walk = _CostWalk(schema, fragments, variables or {}, limits)
        try:
            walk.walk(operation.selection_set, root, 1, frozenset())
        except _TooCostly:
            name = operation.name.value if operation.name else "anonymous"
            errors.append(
                GraphQLError(
                    f"operation '{name}' costs more than {limits.max_cost} "
                    f"(fields × requested page sizes); ask for fewer fields or smaller pages",
                    nodes=[operation],
                )
            )
        errors.extend(walk.errors)
    return errors


class ValidationCache:
    """graphql-core validation results of one schema build, remembered per query text.

    Validation depends only on the document and the schema's static rules
    (depth, aliases, ...), so agents repeating the same queries pay it once;
    the cost rule, which reads variables, still runs on every request. One
    cache belongs to one :func:`hardening_extensions` call, hence to one schema
    and one set of limits.
    """

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._found: OrderedDict[str, list[GraphQLError]] = OrderedDict()

    def validate(self, ctx: Any) -> list[GraphQLError]:
        key = ctx.query or ""
        found = self._found.get(key)
        if found is None:
            found = list(
                validate_document(ctx.schema._schema, ctx.graphql_document, ctx.validation_rules)
            )
            self._found[key] = found
            if len(self._found) > self._size:
                self._found.popitem(last=False)
        else:
            self._found.move_to_end(key)
        return list(found)


class CostLimiter(SchemaExtension):
    """Run validation, then the cost rule, so an expensive query never executes."""

    def __init__(self, *, limits: Limits, cache: ValidationCache) -> None:
        self.limits = limits
        self.cache = cache

    def on_validate(self) -> Iterator[None]:
        ctx = self.execution_context
        if ctx.pre_execution_errors is None and ctx.graphql_document is not None:
            schema = ctx.schema._schema
            errors = self.cache.validate(ctx)
            if not errors:
                errors = operation_cost_errors(
                    schema, ctx.graphql_document, ctx.variables, self.limits
                )
            ctx.pre_execution_errors = errors
        yield


# -- time budget ------------------------------------------------------------------------


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


# -- body size --------------------------------------------------------------------------


class BodyLimit:
    """Read the body of matching paths up to a cap before the app sees it (else 413).

    ``limits`` maps path prefixes to byte caps; ``on_reject`` is told the path
    of every refused request (metrics).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        limits: Sequence[tuple[str, int]],
        on_reject: Callable[[str], None] | None = None,
    ) -> None:
        self.app = app
        self.limits = tuple(limits)
        self.on_reject = on_reject

    def _cap(self, path: str) -> int | None:
        for prefix, cap in self.limits:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                return cap
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        cap = self._cap(scope.get("path", "")) if scope["type"] == "http" else None
        if cap is None:
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > cap):
            await self._refuse(scope, send, cap)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                # Client went away before sending the body: nothing to serve.
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                await self._refuse(scope, send, cap)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, send: Send, cap: int) -> None:
        if self.on_reject is not None:
            self.on_reject(scope.get("path", ""))
        payload = (
            b'{"errors":[{"message":"request body larger than '
            + str(cap).encode()
            + b' bytes","extensions":{"code":"PAYLOAD_TOO_LARGE"}}]}'
        )
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

"""The cost rule: fields times the page sizes they are asked for, refused before execution.

:class:`CostLimiter` runs graphql-core validation (remembered per query text
in a :class:`ValidationCache`), then :func:`operation_cost_errors`, so an
expensive query never executes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

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
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document

from strata_api.graphql.introspection import introspection_errors

if TYPE_CHECKING:
    from strata_api.graphql.limits import Limits

PAGE_ARGUMENTS = ("first", "last", "limit")
MIN_PAGE = "strata.min_page"
"""Field metadata: the smallest page argument the field accepts (default 1)."""
WITHIN_PAGE = "strata.within_page"
"""Field metadata: a list whose length the enclosing field's page argument already bounds
(a connection's ``edges``), so it does not multiply the cost a second time."""
MAX_ITEMS = "strata.max_items"
"""Field metadata: a list with a small fixed bound (a search hit's matches, one per
retriever), multiplied by that bound instead of the default page size."""


class _TooCostly(Exception):
    pass


class _CostWalk:
    """Cost of one operation: every field costs 1 times the page sizes above it.

    A field with a ``first``/``last``/``limit`` argument multiplies what it
    selects by that argument (its default, or the default page size, when
    absent); a list of objects without one by the default page size, unless
    its field is marked :data:`WITHIN_PAGE` (a connection's ``edges``: the
    page above already counted them) or bounded by :data:`MAX_ITEMS`.
    Introspection fields are free here: they are bounded by their own depth
    rule (``introspection.py``), run off the event loop, and are off in production.
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
            low = int(_metadata(field).get(MIN_PAGE, 1))
            high = self.limits.max_page_size
            if not low <= value <= high:
                # The resolver's own words, so a client sees one message for one mistake.
                self.errors.append(
                    GraphQLError(
                        f"`{name}` of `{node.name.value}` must be between {low} and {high}, "
                        f"got {value}",
                        nodes=[node],
                    )
                )
                value = high
            return max(value, 1)
        if isinstance(get_nullable_type(field.type), GraphQLList):
            metadata = _metadata(field)
            if metadata.get(WITHIN_PAGE):
                return 1
            if isinstance(metadata.get(MAX_ITEMS), int):
                return int(metadata[MAX_ITEMS])
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


def _metadata(field: GraphQLField) -> Mapping[str, Any]:
    """The ``metadata`` of the strawberry field behind a graphql-core field."""
    definition = (field.extensions or {}).get("strawberry-definition")
    metadata = getattr(definition, "metadata", None)
    return metadata if isinstance(metadata, Mapping) else {}


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
        # Introspection validates in a worker thread (see introspection.py).
        self._lock = threading.Lock()

    def validate(self, ctx: Any) -> list[GraphQLError]:
        key = ctx.query or ""
        with self._lock:
            found = self._found.get(key)
            if found is not None:
                self._found.move_to_end(key)
                return list(found)
        found = list(
            validate_document(ctx.schema._schema, ctx.graphql_document, ctx.validation_rules)
        )
        with self._lock:
            self._found[key] = found
            if len(self._found) > self._size:
                self._found.popitem(last=False)
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
                errors = introspection_errors(ctx.graphql_document)
            if not errors:
                errors = operation_cost_errors(
                    schema, ctx.graphql_document, ctx.variables, self.limits
                )
            ctx.pre_execution_errors = errors
        yield

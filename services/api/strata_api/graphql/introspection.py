"""Introspection kept small and off the event loop.

strawberry's ``QueryDepthLimiter`` does not count introspection fields, so
``__type { fields { type { ofType { ofType ... } } } }`` could nest without
bound. Here an introspection subtree (``__schema``, ``__type``) may be as deep
as the standard introspection query (graphql-js ``getIntrospectionQuery``,
which GraphiQL sends) and no deeper; it is asked once per operation
(``a: __schema {...} b: __schema {...}`` x 12 took 0.8 s of CPU), and in an
operation of its own, so the schema can run it in a worker thread: introspection resolvers
are synchronous, CPU-bound work that would otherwise stall every other
request (``/healthz`` included) while it runs.
"""

from __future__ import annotations

from collections.abc import Mapping

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
)

INTROSPECTION_DEPTH = 15
"""The depth of the standard introspection query, counted from the operation's root."""
INTROSPECTION_ROOTS = frozenset({"__schema", "__type"})


def introspection_errors(document: DocumentNode) -> list[GraphQLError]:
    """Introspection deeper than :data:`INTROSPECTION_DEPTH`, asked more than once (aliases
    multiply its work), or mixed with other fields."""
    fragments = _fragments(document)
    errors: list[GraphQLError] = []
    for operation in _operations(document):
        roots = _root_fields(operation.selection_set, fragments)
        asked = [f for f in roots if f.name.value in INTROSPECTION_ROOTS]
        if not asked:
            continue
        name = operation.name.value if operation.name else "anonymous"
        if any(f.name.value not in INTROSPECTION_ROOTS | {"__typename"} for f in roots):
            errors.append(
                GraphQLError(
                    f"operation '{name}' mixes introspection with other fields; "
                    "ask for __schema / __type in an operation of its own",
                    nodes=[operation],
                )
            )
        if len(asked) > 1:
            errors.append(
                GraphQLError(
                    f"operation '{name}' asks for introspection {len(asked)} times; "
                    "one __schema or __type per operation",
                    nodes=[operation],
                )
            )
        depth = max(1 + _depth(f.selection_set, fragments, frozenset()) for f in asked)
        if depth > INTROSPECTION_DEPTH:
            errors.append(
                GraphQLError(
                    f"'{name}' exceeds the maximum introspection depth of "
                    f"{INTROSPECTION_DEPTH} (got {depth})",
                    nodes=[operation],
                )
            )
    return errors


def is_introspection(document: DocumentNode, operation_name: str | None) -> bool:
    """Whether the operation that would run asks only for introspection."""
    fragments = _fragments(document)
    operations = [
        o
        for o in _operations(document)
        if operation_name is None or (o.name is not None and o.name.value == operation_name)
    ]
    if len(operations) != 1:
        return False
    roots = _root_fields(operations[0].selection_set, fragments)
    names = {f.name.value for f in roots}
    return bool(names & INTROSPECTION_ROOTS) and names <= INTROSPECTION_ROOTS | {"__typename"}


def _fragments(document: DocumentNode) -> dict[str, FragmentDefinitionNode]:
    return {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}


def _operations(document: DocumentNode) -> list[OperationDefinitionNode]:
    return [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]


def _root_fields(
    selection_set: SelectionSetNode,
    fragments: Mapping[str, FragmentDefinitionNode],
    seen: frozenset[str] = frozenset(),
) -> list[FieldNode]:
    """The fields at the top of a selection set, through fragments."""
    found: list[FieldNode] = []
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            found.append(selection)
        elif isinstance(selection, InlineFragmentNode):
            found.extend(_root_fields(selection.selection_set, fragments, seen))
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = fragments.get(name)
            if fragment is not None and name not in seen:
                found.extend(_root_fields(fragment.selection_set, fragments, seen | {name}))
    return found


def _depth(
    selection_set: SelectionSetNode | None,
    fragments: Mapping[str, FragmentDefinitionNode],
    seen: frozenset[str],
) -> int:
    """Fields below this selection set on its deepest path (cycles count once)."""
    if selection_set is None:
        return 0
    deepest = 0
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            depth = 1 + _depth(selection.selection_set, fragments, seen)
        elif isinstance(selection, InlineFragmentNode):
            depth = _depth(selection.selection_set, fragments, seen)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = fragments.get(name)
            if fragment is None or name in seen:
                continue
            depth = _depth(fragment.selection_set, fragments, seen | {name})
        else:
            continue
        deepest = max(deepest, depth)
    return deepest

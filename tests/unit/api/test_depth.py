"""The hardening extensions on a recursive schema: deep or cyclic documents never execute."""

from __future__ import annotations

import asyncio
from typing import Any

import strawberry

from strata_api.graphql.limits import Limits, hardening_extensions

CALLS: list[str] = []


@strawberry.type
class Node:
    name: str

    @strawberry.field
    def child(self) -> Node:
        CALLS.append(self.name)
        return Node(name=self.name + ".c")


@strawberry.type
class Query:
    @strawberry.field
    def root(self) -> Node:
        CALLS.append("root")
        return Node(name="r")


def run(query: str, limits: Limits) -> Any:
    schema = strawberry.Schema(query=Query, extensions=hardening_extensions(limits))
    CALLS.clear()
    return asyncio.run(schema.execute(query))


class TestDepth:
    """QueryDepthLimiter counts through fragments and survives cycles."""

    def test_within_depth_executes(self) -> None:
        result = run("{ root { child { name } } }", Limits(max_depth=3))
        assert result.errors is None
        assert CALLS == ["root", "r"]

    def test_too_deep_is_refused_before_execution(self) -> None:
        query = "{ root { child { child { child { child { name } } } } } }"
        result = run(query, Limits(max_depth=3))
        assert result.data is None
        assert result.errors
        assert result.errors[0].extensions == {"code": "GRAPHQL_VALIDATION_FAILED"}
        assert CALLS == []

    def test_depth_through_fragments(self) -> None:
        query = (
            "{ root { ...A } } fragment A on Node { child { ...B } } "
            "fragment B on Node { child { child { child { name } } } }"
        )
        result = run(query, Limits(max_depth=3))
        assert result.data is None
        assert CALLS == []

    def test_circular_fragments_are_refused(self) -> None:
        query = (
            "{ root { ...A } } fragment A on Node { child { ...B } } fragment B on Node { ...A }"
        )
        result = run(query, Limits(max_depth=50))
        assert result.data is None
        assert result.errors
        assert CALLS == []

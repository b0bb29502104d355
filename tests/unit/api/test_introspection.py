"""Introspection is depth-limited and runs off the event loop (no services)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import strawberry
from graphql import get_introspection_query, parse

from strata_api.graphql.introspection import (
    INTROSPECTION_DEPTH,
    introspection_errors,
    is_introspection,
)
from strata_api.graphql.schema import Query, StrataSchema


class TestDepth:
    """The standard introspection query fits; one level deeper does not."""

    def test_standard_query_fits(self) -> None:
        assert introspection_errors(parse(get_introspection_query(descriptions=True))) == []

    def test_nested_of_type(self) -> None:
        nested = "ofType { " * 50 + "name" + " }" * 50
        errors = introspection_errors(
            parse(f'{{ __type(name:"Query"){{ fields {{ type {{ {nested} }} }} }} }}')
        )
        assert len(errors) == 1
        assert "introspection depth" in errors[0].message

    def test_depth_through_fragments(self) -> None:
        levels = INTROSPECTION_DEPTH - 2
        fragment = "fragment T on __Type { " + "ofType { " * levels + "name" + " }" * levels + " }"
        ok = parse(f'{{ __type(name:"Query"){{ ...T }} }} {fragment}')
        assert introspection_errors(ok) == []
        deeper = fragment.replace("name", "ofType { name }")
        assert introspection_errors(parse(f'{{ __type(name:"Query"){{ ...T }} }} {deeper}'))

    def test_only_introspection(self) -> None:
        assert is_introspection(parse("{ __schema { queryType { name } } }"), None)
        assert not is_introspection(parse("{ version }"), None)
        assert not is_introspection(parse("{ __typename }"), None)

    def test_asked_once(self) -> None:
        twice = parse("{ a: __schema { queryType { name } } b: __schema { queryType { name } } }")
        assert "2 times" in introspection_errors(twice)[0].message


class TestOffTheLoop:
    """While a large introspection executes, the event loop keeps serving other work."""

    # Six aliased __schema reads: heavy enough to measure, refused by the limits in the
    # app (one introspection per operation), so this schema runs without them.
    QUERY = (
        "{ "
        + " ".join(
            f"a{i}: __schema {{ types {{ name fields {{ name description args {{ name "
            "type { name kind ofType { name kind } } } type { name kind fields "
            "{ name description type { name kind } } } } } }"
            for i in range(6)
        )
        + " }"
    )

    @staticmethod
    def worst_gap(execute: Callable[[], Awaitable[Any]]) -> float:
        """The longest the event loop went without running a 1 ms ticker during ``execute``."""

        async def run() -> float:
            gaps: list[float] = []
            done = asyncio.Event()

            async def ticker() -> None:
                last = time.perf_counter()
                while not done.is_set():
                    await asyncio.sleep(0.001)
                    now = time.perf_counter()
                    gaps.append(now - last)
                    last = now

            task = asyncio.create_task(ticker())
            await asyncio.sleep(0.01)
            result = await execute()
            assert result.errors is None
            done.set()
            await task
            return max(gaps)

        return asyncio.run(run())

    def test_loop_keeps_ticking(self) -> None:
        schema = StrataSchema(query=Query, max_tokens=10_000)
        seen = []
        for _ in range(3):  # a busy shared machine can stall any one measurement
            on_loop = self.worst_gap(lambda: strawberry.Schema.execute(schema, self.QUERY))
            threaded = self.worst_gap(lambda: schema.execute(self.QUERY))
            seen.append((threaded, on_loop))
            if threaded < on_loop / 4:
                break
        assert any(threaded < on_loop / 4 for threaded, on_loop in seen), seen

"""The cost rule: fields times requested page sizes, page arguments bounded (no services)."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import parse

from strata_api.graphql.cost import operation_cost_errors
from strata_api.graphql.limits import Limits
from strata_api.graphql.schema import build_schema

LIMITS = Limits(max_cost=100, default_page_size=10, max_page_size=50)
GRAPHQL = build_schema()._schema
JOB_FIELDS = "id kind repo state ref after progress error createdAt startedAt finishedAt"


def errors(query: str, variables: dict[str, Any] | None = None) -> list[str]:
    return [e.message for e in operation_cost_errors(GRAPHQL, parse(query), variables, LIMITS)]


class TestCost:
    """A page of N objects costs N times what each object selects."""

    def test_small_query_passes(self) -> None:
        assert errors('{ jobs(repository: "r", first: 5) { id state } }') == []

    def test_page_size_multiplies(self) -> None:
        # 1 + 11 fields x 9 = 100 is at the cap; x 10 = 111 is over it.
        assert errors(f'{{ jobs(repository: "r", first: 9) {{ {JOB_FIELDS} }} }}') == []
        assert errors(f'{{ jobs(repository: "r", first: 10) {{ {JOB_FIELDS} }} }}')

    def test_default_page_size_applies_when_first_is_absent(self) -> None:
        assert errors(f'{{ jobs(repository: "r") {{ {JOB_FIELDS} }} }}')
        assert errors('{ jobs(repository: "r") { id } }') == []

    def test_fragments_are_counted(self) -> None:
        query = (
            'query { a: jobs(repository: "r", first: 40) { ...F } } '
            f"fragment F on Job {{ {JOB_FIELDS} }}"
        )
        assert any("costs more than" in m for m in errors(query))

    def test_introspection_is_free(self) -> None:
        assert errors("{ __schema { types { name fields { name args { name } } } } }") == []


class TestPageArguments:
    """Negative or huge page sizes are refused, as literals or as variables."""

    @pytest.mark.parametrize("first", [-1, 51, 10**12])
    def test_literal_out_of_range(self, first: int) -> None:
        assert any(
            "between 0 and 50" in m
            for m in errors(f'{{ jobs(repository: "r", first: {first}) {{ id }} }}')
        )

    @pytest.mark.parametrize("first", [-5, 10**9])
    def test_variable_out_of_range(self, first: int) -> None:
        query = 'query Q($n: Int!) { jobs(repository: "r", first: $n) { id } }'
        assert any("between 0 and 50" in m for m in errors(query, {"n": first}))

    def test_zero_is_allowed(self) -> None:
        assert errors('{ jobs(repository: "r", first: 0) { id } }') == []

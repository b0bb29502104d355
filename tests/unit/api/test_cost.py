"""The cost rule: fields times requested page sizes, page arguments bounded (no services)."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import parse

from strata.settings import Settings
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


class TestDefaultLimit:
    """With the shipped limits a page of 100 with a handful of fields passes; more is refused."""

    DEFAULTS = Limits()  # the settings' defaults (checked below)
    EDGE = "id qualifiedName path line resolution evidence { path lineStart commit }"

    def cost_errors(self, query: str) -> list[str]:
        found = operation_cost_errors(GRAPHQL, parse(query), None, self.DEFAULTS)
        return [e.message for e in found]

    def test_a_page_of_100_callers_passes(self) -> None:
        query = (
            '{ callersPage(symbol: "r|main|a.py|f", depth: 3, first: 100) { nodes { '
            f"{self.EDGE} }} pageInfo {{ hasNextPage endCursor }} totalCount totalCapped }} }}"
        )
        assert self.cost_errors(query) == []
        assert (
            self.cost_errors(
                f'{{ callers(symbol: "r|main|a.py|f", first: 100) {{ {self.EDGE} }} }}'
            )
            == []
        )

    def test_pages_of_100_across_lists_pass(self) -> None:
        # impact's lists, codeChanges' commits and changes, and a hit's matches are
        # bounded by the page above them (or by the retrievers): not multiplied again.
        impact = (
            '{ impact(symbol: "r|main|a.py|f", first: 100) { callers { id qualifiedName } '
            "tests { id qualifiedName } entrypoints { id qualifiedName } truncated } }"
        )
        changes = (
            '{ codeChanges(repository: "r", start: "2025-01-01T00:00:00Z", '
            'end: "2026-01-01T00:00:00Z", first: 100) { commits { commit message '
            "changes { id change path qualifiedName } } hasNextPage endCursor } }"
        )
        search = (
            '{ search(query: "retry", repository: "r") { hits(first: 50) { id score '
            "qualifiedName matches { retriever rank score } evidence { path lineStart } } } }"
        )
        for query in (impact, changes, search):
            assert self.cost_errors(query) == [], query

    FULL = (
        "id kind qualifiedName path repository depth via line lines confidence resolution "
        "entrypoint testFramework evidence { path lineStart lineEnd commit }"
    )  # every field of a call edge: 1 + 100 x 18 = 1801 per page

    def pages(self, count: int) -> str:
        return (
            "{ "
            + " ".join(
                f'p{i}: callers(symbol: "r|main|a{i}.py|f", first: 100) {{ {self.FULL} }}'
                for i in range(count)
            )
            + " }"
        )

    def test_two_full_pages_pass_three_are_refused(self) -> None:
        assert self.cost_errors(self.pages(2)) == []  # 3602
        assert any("costs more than 5000" in m for m in self.cost_errors(self.pages(3)))  # 5403

    def test_the_default_limit_is_the_settings_default(self) -> None:
        assert self.DEFAULTS.max_cost == Settings.model_fields["graphql_max_cost"].default
        assert self.DEFAULTS.max_page_size == 100

"""Property-based fuzzing of /graphql: generated documents over the current schema never 500."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis_graphql import mutations, nodes, queries

from strata_api.graphql.schema import build_schema
from tests.integration.api.conftest import Api

SCHEMA = build_schema().as_str()
EXAMPLES = 250
FUZZ = hypothesis_settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)


def check(response: Any) -> dict[str, Any]:
    """No 5xx, a JSON answer, and no error the server did not mean to raise."""
    assert response.status_code < 500, response.text
    body: dict[str, Any] = response.json()
    for error in body.get("errors", []):
        assert error["extensions"]["code"] != "INTERNAL_SERVER_ERROR", error
    return body


# DateTime arguments: aware and naive (a naive one must be a clear validation error).
SCALARS = {
    "DateTime": st.one_of(st.datetimes(timezones=st.just(UTC)), st.datetimes()).map(
        lambda value: nodes.String(value.isoformat())
    ),
    "JSON": st.just(nodes.String("{}")),
}


class TestFuzz:
    """Every generated query and mutation is answered with data or a deliberate error."""

    def test_queries(self, make_api: Any) -> None:
        runs: list[int] = []
        with make_api(rate_limit_per_minute=1_000_000) as api:
            token = api.key("read", "*")

            @FUZZ
            @given(document=queries(SCHEMA, custom_scalars=SCALARS))
            def run(document: str) -> None:
                runs.append(1)
                check(api.gql(document, token))

            run()
        assert len(runs) >= EXAMPLES // 2

    def test_mutations(self, make_api: Any) -> None:
        runs: list[int] = []
        created: set[str] = set()
        with make_api(rate_limit_per_minute=1_000_000) as api:
            # Every scope on every repository: the deepest paths (lookups, validation, git).
            token = api.key("read,write,admin", "*")

            @FUZZ
            @given(document=mutations(SCHEMA, custom_scalars=SCALARS))
            def run(document: str) -> None:
                runs.append(1)
                data = check(api.gql(document, token)).get("data") or {}
                registered = data.get("registerRepository")
                if isinstance(registered, dict) and "name" in registered:
                    created.add(registered["name"])

            try:
                run()
            finally:
                _forget(api, created)
        assert len(runs) >= EXAMPLES // 2


def _forget(api: Api, names: set[str]) -> None:
    for name in names:
        api.registry.remove(name)

"""GraphQL hardening on the real app: limits refuse before execution, budgets end requests."""

from __future__ import annotations

import time
from typing import Any

import pytest

from strata.errors import DatabaseError
from strata.jobstore import JobStore
from strata_api.graphql.context import Context
from strata_api.graphql.errors import RequestTimeout
from tests.integration.api.conftest import Api

JOB_FIELDS = "id kind repo state ref after progress error createdAt startedAt finishedAt"


def codes(response: Any) -> list[str]:
    return [e["extensions"]["code"] for e in response.json().get("errors", [])]


@pytest.fixture
def executions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every JobStore read the resolvers make; empty means nothing executed."""
    calls: list[str] = []
    original_for_repo, original_get = JobStore.for_repo, JobStore.get

    def for_repo(self: JobStore, repo: str, *, limit: int = 20) -> Any:
        calls.append(repo)
        return original_for_repo(self, repo, limit=limit)

    def get(self: JobStore, job_id: str) -> Any:
        calls.append(job_id)
        return original_get(self, job_id)

    monkeypatch.setattr(JobStore, "for_repo", for_repo)
    monkeypatch.setattr(JobStore, "get", get)
    return calls


def refused(response: Any, executions: list[str], code: str = "GRAPHQL_VALIDATION_FAILED") -> None:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["data"] is None
    assert code in codes(response)
    assert executions == []


class TestDocumentLimits:
    """Depth, aliases, tokens, cost, cycles and page sizes: a validation error, no execution."""

    def test_a_normal_query_executes(self, api: Api, executions: list[str]) -> None:
        response = api.gql('{ jobs(repository: "x", first: 5) { id state } }', api.key())
        assert response.json() == {"data": {"jobs": []}}
        assert executions == ["x"]

    def test_too_many_aliases(self, api: Api, executions: list[str]) -> None:
        aliases = " ".join(f'a{i}: jobs(repository: "x", first: 1) {{ id }}' for i in range(16))
        refused(api.gql(f"{{ {aliases} }}", api.key()), executions)

    def test_aliases_hidden_in_fragments(self, api: Api, executions: list[str]) -> None:
        aliases = " ".join(f"a{i}: version" for i in range(16))
        query = f"{{ ...F }} fragment F on Query {{ {aliases} }}"
        refused(api.gql(query, api.key()), executions)

    def test_too_many_tokens(self, api: Api, executions: list[str]) -> None:
        fields = " ".join(["id"] * 2100)
        query = f'{{ jobs(repository: "x", first: 1) {{ {fields} }} }}'
        refused(api.gql(query, api.key()), executions, "GRAPHQL_PARSE_FAILED")

    def test_over_cost(self, make_api: Any, executions: list[str]) -> None:
        with make_api(graphql_max_cost=100) as api:
            query = f'{{ jobs(repository: "x", first: 50) {{ {JOB_FIELDS} }} }}'
            response = api.gql(query, api.key())
            refused(response, executions)
            assert "costs more than 100" in response.json()["errors"][0]["message"]

    def test_over_cost_through_fragments(self, make_api: Any, executions: list[str]) -> None:
        with make_api(graphql_max_cost=100) as api:
            query = (
                'query { a: jobs(repository: "x", first: 20) { ...F } '
                'b: jobs(repository: "y", first: 20) { ...F } } '
                f"fragment F on Job {{ {JOB_FIELDS} }}"
            )
            refused(api.gql(query, api.key()), executions)

    def test_circular_fragments(self, api: Api, executions: list[str]) -> None:
        query = (
            'query { jobs(repository: "x") { ...A } } '
            "fragment A on Job { id ...B } fragment B on Job { state ...A }"
        )
        refused(api.gql(query, api.key()), executions)

    def test_self_referencing_fragment(self, api: Api, executions: list[str]) -> None:
        query = "{ ...Q } fragment Q on Query { version ...Q }"
        refused(api.gql(query, api.key()), executions)

    @pytest.mark.parametrize("first", [-1, -(2**31), 101, 2**31 - 1])
    def test_page_size_out_of_range(self, api: Api, executions: list[str], first: int) -> None:
        query = f'{{ jobs(repository: "x", first: {first}) {{ id }} }}'
        refused(api.gql(query, api.key()), executions)

    @pytest.mark.parametrize("first", [-1, 1000])
    def test_page_size_out_of_range_in_a_variable(
        self, api: Api, executions: list[str], first: int
    ) -> None:
        query = 'query Q($n: Int!) { jobs(repository: "x", first: $n) { id } }'
        response = api.client.post(
            "/graphql",
            json={"query": query, "variables": {"n": first}},
            headers={"Authorization": f"Bearer {api.key()}"},
        )
        refused(response, executions)

    def test_first_beyond_int32(self, api: Api, executions: list[str]) -> None:
        query = f'{{ jobs(repository: "x", first: {2**40}) {{ id }} }}'
        refused(api.gql(query, api.key()), executions)

    def test_unknown_field(self, api: Api, executions: list[str]) -> None:
        refused(api.gql("{ nope }", api.key()), executions)

    def test_syntax_error(self, api: Api, executions: list[str]) -> None:
        refused(api.gql("{ jobs(", api.key()), executions, "GRAPHQL_PARSE_FAILED")


class TestTransport:
    """POST-only JSON, no batching, capped bodies, per-key rate limits."""

    def test_get_is_405(self, api: Api) -> None:
        response = api.client.get("/graphql", params={"query": "{ version }"})
        assert response.status_code == 405
        assert response.headers["allow"] == "POST"

    def test_graphiql_only_in_development(self, make_api: Any) -> None:
        with make_api() as api:
            assert api.client.get("/graphql", headers={"Accept": "text/html"}).status_code == 405
        with make_api(environment="development") as dev:
            page = dev.client.get("/graphql", headers={"Accept": "text/html"})
            assert page.status_code == 200
            assert "graphiql" in page.text.lower()

    def test_form_body_is_415(self, api: Api) -> None:
        response = api.client.post(
            "/graphql",
            content="query={ version }",
            headers={
                "Authorization": f"Bearer {api.key()}",
                "Content-Type": "application/x-www-form-urlencoded",
            },
        )
        assert response.status_code == 415

    def test_batching_is_refused(self, api: Api) -> None:
        response = api.client.post(
            "/graphql",
            json=[{"query": "{ version }"}, {"query": "{ version }"}],
            headers={"Authorization": f"Bearer {api.key()}"},
        )
        assert response.status_code == 400

    def test_oversized_body_is_413(self, make_api: Any) -> None:
        with make_api(graphql_max_body_bytes=1024) as api:
            response = api.gql("{ version }" + " " * 2000, api.key())
            assert response.status_code == 413

    def test_rate_limit(self, make_api: Any) -> None:
        with make_api(rate_limit_per_minute=3) as api:
            token = api.key()
            statuses = [api.gql("{ version }", token) for _ in range(8)]
            assert [r.status_code for r in statuses[:3]] == [200, 200, 200]
            limited = [r for r in statuses if r.status_code == 429]
            assert limited
            assert 1 <= int(limited[0].headers["retry-after"]) <= 60
            assert codes(limited[0]) == ["RATE_LIMITED"]
            # another key has its own budget
            assert api.gql("{ version }", api.key()).status_code == 200


class TestTimeBudget:
    """A request past its budget ends with TIMEOUT, and Neo4j aborts its transaction too."""

    def test_request_past_its_budget(self, make_api: Any) -> None:
        with make_api(request_timeout_s=0.001) as api:
            response = api.gql('{ jobs(repository: "x") { id } }', api.key())
            assert response.status_code == 200
            assert codes(response) == ["TIMEOUT"]

    def test_neo4j_transaction_is_aborted_at_the_budget(self, api: Api) -> None:
        app_state: Any = api.client.app.state  # type: ignore[attr-defined]
        context = Context(
            settings=api.settings,
            gateway=app_state.gateway,
            deadline=time.monotonic() + 0.5,
        )
        slow = "UNWIND range(1, 400000000) AS x WITH x WHERE x % 7 = 3 RETURN count(*) AS n"
        started = time.monotonic()
        with pytest.raises(RequestTimeout) as caught:
            api.client.portal.call(lambda: context.read(slow))  # type: ignore[attr-defined]
        assert time.monotonic() - started < 5
        cause = caught.value.__cause__
        assert isinstance(cause, DatabaseError)
        assert "TransactionTimedOut" in str(cause.details["gql_status"])


class TestProductionMode:
    """Production hides introspection and suggestions, and masks internal errors."""

    def test_introspection_is_off_in_production(self, make_api: Any) -> None:
        with make_api(environment="production") as api:
            response = api.gql("{ __schema { types { name } } }", api.key())
            assert response.json()["data"] is None
            assert set(codes(response)) == {"GRAPHQL_VALIDATION_FAILED"}

    def test_introspection_is_on_in_development(self, make_api: Any) -> None:
        with make_api(environment="development") as api:
            response = api.gql("{ __schema { queryType { name } } }", api.key())
            assert response.json()["data"]["__schema"]["queryType"]["name"] == "Query"

    def test_no_field_suggestions_in_production(self, make_api: Any) -> None:
        with make_api(environment="production") as api:
            message = api.gql("{ versio }", api.key()).json()["errors"][0]["message"]
            assert "Did you mean" not in message
        with make_api(environment="development") as dev:
            message = dev.gql("{ versio }", dev.key()).json()["errors"][0]["message"]
            assert "Did you mean" in message

    def test_internal_error_is_masked_in_production(self, make_api: Any, unique: str) -> None:
        broken = f"broken{unique}"
        with make_api(environment="production") as api:
            # A job record missing required fields makes the resolver fail unexpectedly.
            api.redis.hset(f"strata:job:{broken}", mapping={"id": broken, "repo": "x"})
            response = api.gql(f'{{ job(id: "{broken}") {{ id }} }}', api.key())
            error = response.json()["errors"][0]
            assert error["message"] == "Internal server error"
            assert error["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}
            assert "kind" not in response.text

    def test_internal_error_is_readable_in_development(self, make_api: Any, unique: str) -> None:
        broken = f"broken{unique}"
        with make_api(environment="development") as api:
            api.redis.hset(f"strata:job:{broken}", mapping={"id": broken, "repo": "x"})
            error = api.gql(f'{{ job(id: "{broken}") {{ id }} }}', api.key()).json()["errors"][0]
            assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
            assert "kind" in error["message"]

    def test_validation_errors_stay_readable_in_production(
        self, make_api: Any, unique: str
    ) -> None:
        with make_api(environment="production") as api:
            api.register(f"r-{unique}")
            response = api.gql(
                f'mutation {{ reindex(repository: "r-{unique}", after: "HEAD") {{ id }} }}',
                api.key("write"),
            )
            error = response.json()["errors"][0]
            assert error["extensions"]["code"] == "VALIDATION_ERROR"
            assert "hex" in error["message"]

"""Holes an outside test found (issue 15), each closed and kept closed on the real app.

Every test sends exactly the input the finding reported, to the real app on
the test Neo4j and Redis.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import structlog
from graphql import get_introspection_query

from tests.integration.api.conftest import SHA_A, Api, sign


def codes(response: Any) -> list[str]:
    return [e["extensions"]["code"] for e in response.json().get("errors", [])]


def post_raw(api: Api, body: bytes) -> Any:
    return api.client.post(
        "/graphql",
        content=body,
        headers={"Authorization": f"Bearer {api.key()}", "Content-Type": "application/json"},
    )


class TestMalformedBodies:
    """F1: a body strawberry cannot parse is 400 with a GraphQL-style error, never 500."""

    @pytest.mark.parametrize("body", [b'"x"', b"42", b"null", b"true"])
    def test_json_that_is_not_an_object(self, api: Api, body: bytes) -> None:
        response = post_raw(api, body)
        assert response.status_code == 400, response.text
        assert codes(response) == ["BAD_REQUEST"]
        assert "JSON object" in response.json()["errors"][0]["message"]

    def test_invalid_utf8(self, api: Api) -> None:
        response = post_raw(api, b'{"query":"\xff"}')
        assert response.status_code == 400, response.text
        assert codes(response) == ["BAD_REQUEST"]
        assert "UTF-8" in response.json()["errors"][0]["message"]

    def test_thousand_deep_variables(self, api: Api) -> None:
        nested = "[" * 1000 + "]" * 1000
        body = ('{"query":"{ version }","variables":{"v":' + nested + "}}").encode()
        response = post_raw(api, body)
        assert response.status_code == 400, response.text
        assert codes(response) == ["BAD_REQUEST"]
        assert "nests deeper" in response.json()["errors"][0]["message"]

    def test_not_json_at_all(self, api: Api) -> None:
        response = post_raw(api, b"{query")
        assert response.status_code == 400
        assert codes(response) == ["BAD_REQUEST"]

    def test_query_that_is_not_a_string(self, api: Api) -> None:
        response = post_raw(api, b'{"query": 5}')
        assert response.status_code == 400
        assert codes(response) == ["BAD_REQUEST"]

    def test_a_normal_body_still_works(self, api: Api) -> None:
        response = post_raw(api, b'{"query":"{ version }","variables":{"v":[[1]]}}')
        assert response.status_code == 200
        assert "version" in response.json()["data"]


class TestVariableCoercion:
    """F2: a variable of the wrong type is the client's mistake, not an internal error."""

    QUERY = 'query($f:Int!){ symbols(filter:{name:"x"}, first:$f){ edges { cursor } } }'

    def refused(self, response: Any) -> str:
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["data"] is None
        assert codes(response) == ["BAD_USER_INPUT"]
        return str(body["errors"][0]["message"])

    def test_string_for_int(self, api: Api) -> None:
        message = self.refused(api.gql(self.QUERY, api.key(), {"f": "100"}))
        assert "$f" in message
        assert "Int" in message

    def test_missing_required_variable(self, api: Api) -> None:
        message = self.refused(api.gql(self.QUERY, api.key(), {}))
        assert "$f" in message

    def test_bad_datetime_variable(self, api: Api) -> None:
        query = (
            'query($d: DateTime!){ changes(repository: "x", start: $d, end: $d) { __typename } }'
        )
        message = self.refused(api.gql(query, api.key(), {"d": "yesterday"}))
        assert "DateTime" in message

    def test_the_same_mistake_as_a_literal(self, api: Api) -> None:
        query = '{ symbols(filter:{name:"x"}, first:"100"){ edges { cursor } } }'
        response = api.gql(query, api.key())
        assert response.json()["data"] is None
        assert codes(response) == ["GRAPHQL_VALIDATION_FAILED"]


class TestFullTextOperators:
    """F3: Lucene syntax in a search is searched for, never parsed."""

    @pytest.mark.parametrize(
        "text", ["AND", "OR", "NOT", "a AND", "(", '"', "*", "a:b", "\\", "x~2 && y || !z"]
    )
    def test_operators_search_literally(self, api: Api, text: str) -> None:
        response = api.gql("query($q: String!){ facts(query: $q){ id } }", api.key(), {"q": text})
        body = response.json()
        assert "errors" not in body or codes(response) == ["VALIDATION_ERROR"], body
        if "errors" not in body:
            assert body["data"]["facts"] == []

    def test_the_reported_query(self, api: Api) -> None:
        response = api.gql('{ facts(query:"AND"){ id } }', api.key())
        assert response.json() == {"data": {"facts": []}}


class TestRegistrationInput:
    """F5, F6: clone URLs and branch names that git would read as options are refused."""

    MUTATION = (
        "mutation($name: String!, $url: String!, $branch: String!) {"
        " registerRepository(name: $name, provider: GITHUB, webhookSecret: "
        '"a-webhook-secret-0123456789", url: $url, defaultBranch: $branch) { name } }'
    )

    def register(self, api: Api, name: str, url: str, branch: str = "main") -> Any:
        variables = {"name": name, "url": url, "branch": branch}
        return api.gql(self.MUTATION, api.key("admin"), variables)

    def test_url_starting_an_option(self, api: Api, unique: str) -> None:
        name = f"f5-{unique}"
        response = self.register(api, name, "ssh://-oProxyCommand=...")
        assert codes(response) == ["VALIDATION_ERROR"]
        assert api.registry.get(name) is None

    def test_branch_starting_an_option(self, api: Api, unique: str) -> None:
        name = f"f6-{unique}"
        response = self.register(
            api, name, "https://git.example/x.git", "refs/heads/--upload-pack=x"
        )
        assert codes(response) == ["VALIDATION_ERROR"]
        assert api.registry.get(name) is None

    def test_good_input_is_still_registered(self, api: Api, unique: str) -> None:
        name = f"ok-{unique}"
        response = self.register(api, name, "https://git.example/x.git", "refs/heads/main")
        assert response.json()["data"]["registerRepository"]["name"] == name
        reg = api.registry.get(name)
        assert reg is not None
        assert reg.default_branch == "main"


class TestIntrospectionDepth:
    """F7: introspection fields count towards depth; the standard query still runs."""

    def test_fifty_deep_of_type(self, make_api: Any) -> None:
        nested = "ofType { " * 50 + "name" + " }" * 50
        query = f'{{ __type(name:"Query"){{ fields {{ type {{ {nested} }} }} }} }}'
        with make_api(environment="development") as api:
            response = api.gql(query, api.key())
            assert response.json()["data"] is None
            assert codes(response) == ["GRAPHQL_VALIDATION_FAILED"]
            assert "introspection depth" in response.json()["errors"][0]["message"]

    def test_standard_introspection_query_runs(self, make_api: Any) -> None:
        with make_api(environment="development") as api:
            response = api.gql(get_introspection_query(descriptions=True), api.key())
            body = response.json()
            assert "errors" not in body, body
            assert body["data"]["__schema"]["queryType"]["name"] == "Query"

    def test_introspection_mixed_with_data_is_refused(self, make_api: Any) -> None:
        with make_api(environment="development") as api:
            response = api.gql("{ version __schema { queryType { name } } }", api.key())
            assert codes(response) == ["GRAPHQL_VALIDATION_FAILED"]


class TestPageBounds:
    """F8: page sizes the resolver would refuse are refused at validation, same words."""

    @pytest.mark.parametrize("first", [0, 101])
    def test_symbols_first_out_of_range(self, api: Api, first: int) -> None:
        query = f'{{ symbols(filter:{{name:"x"}}, first: {first}){{ edges {{ cursor }} }} }}'
        response = api.gql(query, api.key())
        assert response.json()["data"] is None
        assert codes(response) == ["GRAPHQL_VALIDATION_FAILED"]
        message = response.json()["errors"][0]["message"]
        assert f"`first` of `symbols` must be between 1 and 100, got {first}" == message

    def test_jobs_first_zero_is_an_empty_page(self, api: Api) -> None:
        response = api.gql('{ jobs(repository: "x", first: 0) { id } }', api.key())
        assert response.json() == {"data": {"jobs": []}}


class TestCostSizing:
    """An ordinary page of 100 rows passes the cost limit; abusive fan-out does not."""

    def test_a_page_of_a_hundred_symbols(self, api: Api) -> None:
        query = (
            '{ symbols(filter:{name:"x"}, first: 100){ edges { cursor node '
            "{ id name path kind qualifiedName evidence { path lineStart commit } } } "
            "pageInfo { hasNextPage endCursor } } }"
        )
        response = api.gql(query, api.key())
        assert "errors" not in response.json(), response.text
        assert response.json()["data"]["symbols"]["edges"] == []

    def test_many_full_pages_are_refused(self, api: Api) -> None:
        page = (
            'callers(symbol: "x|main|a.py|f", first: 100) '
            "{ id qualifiedName path line confidence resolution evidence { path commit } }"
        )
        query = "{ " + " ".join(f"a{i}: {page}" for i in range(10)) + " }"
        response = api.gql(query, api.key())
        assert response.json()["data"] is None
        assert "costs more than" in response.json()["errors"][0]["message"]


class TestErrorLogging:
    """F9: a client error is one structured line without a traceback; internal ones keep it."""

    def test_client_error_is_one_line(self, api: Api, caplog: pytest.LogCaptureFixture) -> None:
        query = 'query($f:Int!){ symbols(filter:{name:"x"}, first:$f){ edges { cursor } } }'
        with caplog.at_level(logging.DEBUG), structlog.testing.capture_logs() as logs:
            api.gql(query, api.key(), {"f": "100"})
            api.gql("{ nope }", api.key())
            api.gql("{ symbols(filter: {}) { edges { cursor } } }", api.key())
        graphql = [e for e in logs if str(e["event"]).startswith("graphql.")]
        assert [e["event"] for e in graphql] == ["graphql.client_error"] * 3
        assert [e["code"] for e in graphql] == [
            "BAD_USER_INPUT",
            "GRAPHQL_VALIDATION_FAILED",
            "VALIDATION_ERROR",
        ]
        assert all("exc_info" not in e for e in graphql)
        assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]

    def test_internal_error_keeps_its_traceback(self, api: Api, unique: str) -> None:
        broken = f"broken{unique}"
        api.redis.hset(f"strata:job:{broken}", mapping={"id": broken, "repo": "x"})
        with structlog.testing.capture_logs() as logs:
            api.gql(f'{{ job(id: "{broken}") {{ id }} }}', api.key())
        internal = [e for e in logs if e["event"] == "graphql.internal_error"]
        assert len(internal) == 1
        assert isinstance(internal[0]["exc_info"], BaseException)


class TestBitbucketTarget:
    """A Bitbucket change whose present side has no commit object is malformed (400)."""

    @pytest.mark.parametrize("target", ["abc", None, 7, [SHA_A]])
    def test_target_not_an_object(self, api: Api, unique: str, target: Any) -> None:
        name = f"bbt-{unique}"
        api.register(name, "bitbucket")
        change = {
            "old": {"type": "branch", "name": "main", "target": {"hash": SHA_A}},
            "new": {"type": "branch", "name": "main", "target": target},
        }
        body = json.dumps({"push": {"changes": [change]}}).encode()
        headers = {"X-Event-Key": "repo:push", "X-Hub-Signature": "sha256=" + sign(body)}
        response = api.push("bitbucket", name, body, headers)
        assert response.status_code == 400, response.text
        assert api.queued() == 0

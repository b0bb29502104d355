"""The `search` GraphQL field: cited hits, the key's repositories, typed errors."""

from __future__ import annotations

from typing import Any

from tests.integration.api.conftest import Api
from tests.integration.search.conftest import Indexed

SEARCH = """
query S($q: String!, $r: String!, $first: Int, $kinds: [String!], $asOf: AsOfInput) {
  search(query: $q, repository: $r, kinds: $kinds, asOf: $asOf) {
    query retrievers pendingEmbeddings notes
    hits(first: $first) { id kind qualifiedName score summary
           matches { retriever rank score via }
           evidence { path lineStart lineEnd commit } }
  }
}
"""


def codes(response: Any) -> list[str]:
    return [e["extensions"]["code"] for e in response.json().get("errors", [])]


class TestSearchField:
    """Search through the API answers like the core, under the key's repositories."""

    def test_hits_cite_their_evidence(self, api: Api, shop: Indexed) -> None:
        response = api.gql(SEARCH, api.key(), {"q": "refund money", "r": shop.repo})
        assert response.status_code == 200, response.text
        assert "errors" not in response.json(), response.json()
        body = response.json()["data"]["search"]
        top = body["hits"][0]
        assert top["qualifiedName"] == "billing.payments.PaymentGateway.refund"
        assert top["evidence"] == {
            "path": "billing/payments.py",
            "lineStart": 11,
            "lineEnd": 13,
            "commit": shop.shas[0],  # unchanged by the second commit
        }
        assert {m["retriever"] for m in top["matches"]} >= {"fulltext"}
        assert "fulltext" in body["retrievers"]

    def test_files_the_hits_fall_in(self, api: Api, shop: Indexed) -> None:
        query = """
        query F($q: String!, $r: String!) {
          search(query: $q, repository: $r) {
            files(first: 2) { path score hitIds }
            hits(first: 5) { id }
          }
        }
        """
        body = api.gql(query, api.key(), {"q": "capture payment gateway", "r": shop.repo}).json()
        assert "errors" not in body, body
        files = body["data"]["search"]["files"]
        assert len(files) == 2
        assert files[0]["path"] == "billing/payments.py"
        assert files[0]["score"] >= files[1]["score"] > 0
        assert all(key.startswith(shop.repo) for key in files[0]["hitIds"])
        refused = api.gql(
            query.replace("first: 2", "first: 51"), api.key(), {"q": "payment", "r": shop.repo}
        )
        assert codes(refused) == ["VALIDATION_ERROR"]
        # Refused by `search` itself, before its `hits` sibling started a run that would
        # outlive the answer; a variable inside a fragment is seen too.
        assert refused.json()["errors"][0]["path"] == ["search"]
        in_fragment = """
        query F($q: String!, $r: String!, $n: Int!) {
          search(query: $q, repository: $r) { ...Parts }
        }
        fragment Parts on SearchResult { hits(first: 5) { id } files(first: $n) { path } }
        """
        variables = {"q": "payment", "r": shop.repo, "n": 51}
        refused = api.gql(in_fragment, api.key(), variables)
        assert codes(refused) == ["VALIDATION_ERROR"], refused.json()
        assert refused.json()["errors"][0]["path"] == ["search"]

    def test_as_of_the_first_commit(self, api: Api, shop: Indexed) -> None:
        variables = {
            "q": "charge_card",
            "r": shop.repo,
            "asOf": {"validAt": "2025-01-15T00:00:00Z"},
        }
        body = api.gql(SEARCH, api.key(), variables).json()["data"]["search"]
        assert body["hits"][0]["qualifiedName"] == "billing.payments.charge_card"
        assert body["hits"][0]["evidence"]["commit"] == shop.shas[0]

    def test_other_repository_key_sees_not_found(self, api: Api, shop: Indexed) -> None:
        token = api.key(repos="some-other-repo")
        response = api.gql(SEARCH, token, {"q": "refund", "r": shop.repo})
        assert codes(response) == ["NOT_FOUND"]

    def test_unknown_repository_is_not_found(self, api: Api) -> None:
        response = api.gql(SEARCH, api.key(), {"q": "refund", "r": "nope-nothing-here"})
        assert codes(response) == ["NOT_FOUND"]

    def test_bad_input_is_a_validation_error(self, api: Api, shop: Indexed) -> None:
        for variables in (
            {"q": "", "r": shop.repo},
            {"q": "x", "r": shop.repo, "kinds": ["gadget"]},
        ):
            assert codes(api.gql(SEARCH, api.key(), variables)) == ["VALIDATION_ERROR"], variables
        # A page bound is checked before execution, like every `first` (issue 15, F8).
        zero = {"q": "x", "r": shop.repo, "first": 0}
        assert set(codes(api.gql(SEARCH, api.key(), zero))) == {"GRAPHQL_VALIDATION_FAILED"}


FUZZY = """
query F($f: SymbolFilter!) { symbols(filter: $f, first: 10) { edges { node { qualifiedName } } } }
"""


class TestFuzzySymbols:
    """symbols(filter: {nameContains, qualifiedNameSuffix}) ignores case."""

    def test_name_contains_and_suffix(self, api: Api, shop: Indexed) -> None:
        def found(filter_: dict[str, Any]) -> list[str]:
            response = api.gql(FUZZY, api.key(), {"f": filter_})
            assert "errors" not in response.json(), response.json()
            return [e["node"]["qualifiedName"] for e in response.json()["data"]["symbols"]["edges"]]

        assert found({"nameContains": "GRANDtotal", "repository": shop.repo}) == [
            "web/cart.ts:ShoppingCartStore.computeGrandTotal"
        ]
        assert found({"qualifiedNameSuffix": "Gateway.REFUND", "repository": shop.repo}) == [
            "billing.payments.PaymentGateway.refund"
        ]
        # The name prefilter keeps every match: a suffix that starts or ends inside a
        # name, and a path-qualified name.
        for suffix in ("efund", "ymentGateway.refund", "PAYMENTS.PaymentGateway.refund"):
            assert found({"qualifiedNameSuffix": suffix, "repository": shop.repo}) == [
                "billing.payments.PaymentGateway.refund"
            ], suffix
        path_qualified = {"qualifiedNameSuffix": "ts:shoppingcartstore.computegrandtotal"}
        assert found({**path_qualified, "repository": shop.repo}) == [
            "web/cart.ts:ShoppingCartStore.computeGrandTotal"
        ]
        assert found({"nameContains": "zzz-nothing", "repository": shop.repo}) == []

    def test_blank_needle_is_refused(self, api: Api, shop: Indexed) -> None:
        response = api.gql(FUZZY, api.key(), {"f": {"nameContains": "  "}})
        assert codes(response) == ["VALIDATION_ERROR"]

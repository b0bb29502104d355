"""`search`, `context` and `codeChanges` over GraphQL say when the moment is before the history."""

from __future__ import annotations

from datetime import datetime

from tests.integration.api.conftest import Api, api, make_api
from tests.integration.context.conftest import C1, Shop
from tests.integration.context.test_graphql import CONTEXT, gql

__all__ = ["api", "make_api"]  # the API fixtures

BEFORE = {"validAt": "2025-01-01T00:00:00Z"}  # the shop's first commit is C1, 2025-05-01
SEARCH = """query($repo: String!, $asOf: AsOfInput) {
  search(query: "discount", repository: $repo, asOf: $asOf) { hits(first: 5) { name } } }"""
EARLY_CHANGES = """query($repo: String!) {
  codeChanges(repository: $repo, start: "2024-01-01T00:00:00Z", end: "2025-01-01T00:00:00Z") {
    total commits { commit } } }"""


def reason(body: dict[str, object], field: str) -> dict[str, object]:
    assert "errors" not in body, body
    reasons = body.get("extensions", {}).get("reasons", [])  # type: ignore[union-attr]
    [found] = [r for r in reasons if r["path"] == [field]]
    return dict(found)


class TestBeforeHistory:
    """Empty before the first indexed commit: BEFORE_HISTORY, with that commit's time."""

    def test_search(self, api: Api, shop: Shop) -> None:
        token = api.key("read", shop.name)
        early = gql(api, token, SEARCH, repo=shop.name, asOf=BEFORE)
        assert early["data"]["search"]["hits"] == []
        why = reason(early, "search")
        assert why["code"] == "BEFORE_HISTORY"
        assert datetime.fromisoformat(str(why["firstIndexedAt"])) == C1
        now = gql(api, token, SEARCH, repo=shop.name)
        assert now["data"]["search"]["hits"]
        assert "extensions" not in now or not now["extensions"].get("reasons")

    def test_context(self, api: Api, shop: Shop) -> None:
        token = api.key("read", shop.name)
        body = gql(
            api, token, CONTEXT, task="explain `discount`", repo=shop.name, budget=500, asOf=BEFORE
        )
        assert body["data"]["context"]["sufficient"] is False
        assert reason(body, "context")["code"] == "BEFORE_HISTORY"

    def test_code_changes(self, api: Api, shop: Shop) -> None:
        body = gql(api, api.key("read", shop.name), EARLY_CHANGES, repo=shop.name)
        assert body["data"]["codeChanges"]["total"] == 0
        assert reason(body, "codeChanges")["code"] == "BEFORE_HISTORY"

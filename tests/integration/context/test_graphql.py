"""`context` and `codeChanges` through the real API (key checks, as-of, cursor, errors)."""

from __future__ import annotations

from typing import Any

from tests.integration.api.conftest import Api, api, make_api
from tests.integration.context.conftest import Shop

__all__ = ["api", "make_api"]  # the API fixtures

CONTEXT = """
query($task: String!, $repo: String!, $budget: Int!, $asOf: AsOfInput) {
  context(task: $task, repository: $repo, budgetTokens: $budget, asOf: $asOf) {
    intent targetName sufficient reasons budgetTokens tokens dropped
    sections { title lines { text citation path line commit } }
    markdown
  }
}
"""

CHANGES = """
query($repo: String!, $path: String, $change: String, $first: Int!, $after: String) {
  codeChanges(repository: $repo, start: "2025-05-15T00:00:00Z", end: "2025-08-01T00:00:00Z",
              path: $path, change: $change, first: $first, after: $after) {
    total hasNextPage endCursor
    commits { commit author message changes { change qualname previousPath previousQualname } }
  }
}
"""


def gql(api: Api, token: str, query: str, **variables: Any) -> dict[str, Any]:
    body: dict[str, Any] = api.gql(query, token, variables).json()
    return body


class TestContext:
    """The pack over GraphQL is the core's pack; bad input and unreadable repos are errors."""

    def test_pack(self, api: Api, shop: Shop) -> None:
        api.register(shop.name, path=str(shop.path))  # the outline reads the registered path
        token = api.key("read", shop.name)
        body = gql(
            api, token, CONTEXT, task="trace `discount` step by step", repo=shop.name, budget=400
        )
        assert "errors" not in body, body
        pack = body["data"]["context"]
        assert pack["intent"] == "trace_flow"
        assert pack["targetName"] == "pricing.discount"
        assert pack["sufficient"] is True
        assert pack["tokens"] <= 400
        outline = next(s for s in pack["sections"] if s["title"] == "Outline")
        assert outline["lines"][0] == {
            "text": 'if: `if code == "VIP":`',
            "citation": f"pricing.py:9@{shop.shas[1][:12]}",
            "path": "pricing.py",
            "line": 9,
            "commit": shop.shas[1],
        }
        assert pack["markdown"].startswith("# Context (trace_flow): pricing.discount")

    def test_errors(self, api: Api, shop: Shop) -> None:
        token = api.key("read", shop.name)
        bad = gql(api, token, CONTEXT, task="explain `discount`", repo=shop.name, budget=1)
        assert bad["errors"][0]["extensions"]["code"] == "VALIDATION_ERROR"
        other = api.key("read", "someone-else")
        hidden = gql(api, other, CONTEXT, task="explain `discount`", repo=shop.name, budget=500)
        assert hidden["errors"][0]["extensions"]["code"] == "NOT_FOUND"


class TestCodeChanges:
    """Classified changes by commit, paged with a cursor, filtered by path and change."""

    def test_pages(self, api: Api, shop: Shop) -> None:
        token = api.key("read", shop.name)
        seen: list[tuple[str, str]] = []
        after = None
        pages = 0
        while True:
            body = gql(api, token, CHANGES, repo=shop.name, first=1, after=after)
            assert "errors" not in body, body
            page = body["data"]["codeChanges"]
            assert page["total"] == 4
            seen += [(c["change"], c["qualname"]) for g in page["commits"] for c in g["changes"]]
            pages += 1
            if not page["hasNextPage"]:
                break
            after = page["endCursor"]
        assert pages == 4
        assert sorted(seen) == [
            ("added", "empty"),
            ("modified", "discount"),
            ("moved", "slugify"),
            ("renamed", "sum_items"),
        ]

    def test_grouped_and_filtered(self, api: Api, shop: Shop) -> None:
        token = api.key("read", shop.name)
        body = gql(api, token, CHANGES, repo=shop.name, first=10, path="pricing.py")
        commits = body["data"]["codeChanges"]["commits"]
        assert len(commits) == 1
        assert commits[0]["commit"] == shop.shas[1]
        assert commits[0]["author"] == "Dev"
        assert commits[0]["message"].startswith("VIP discount 25%")
        moved = gql(api, token, CHANGES, repo=shop.name, first=10, change="moved")
        change = moved["data"]["codeChanges"]["commits"][0]["changes"][0]
        assert change == {
            "change": "moved",
            "qualname": "slugify",
            "previousPath": "util.py",
            "previousQualname": "slugify",
        }
        unreadable = gql(api, api.key("read", "someone-else"), CHANGES, repo=shop.name, first=5)
        assert unreadable["data"]["codeChanges"]["total"] == 0
        forged = gql(api, token, CHANGES, repo=shop.name, first=5, after="bm9wZQ==")
        assert forged["errors"][0]["extensions"]["code"] == "VALIDATION_ERROR"

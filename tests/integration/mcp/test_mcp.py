"""The MCP server end to end, with the SDK's own client, against the real Neo4j.

search -> symbol -> callers -> impact gives cited answers over stdio and over
Streamable HTTP; bad arguments and missing keys give clear errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from strata.settings import Settings
from tests.integration.mcp.conftest import STRATA, server_env
from tests.integration.search.conftest import Indexed

TOOLS = {
    "search",
    "symbol",
    "callers",
    "callees",
    "impact",
    "history",
    "changes",
    "requirement",
    "tests_for",
}


def stdio(settings: Settings, key: str | None) -> Client:
    extra = {"STRATA_API_KEY": key} if key else {}
    params = StdioServerParameters(
        command=STRATA[0], args=[*STRATA[1:], "mcp"], env=server_env(settings, **extra)
    )
    return Client(params, read_timeout_seconds=120)


def http(url: str, key: str | None) -> Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    client = httpx2.AsyncClient(headers=headers, timeout=120)
    return Client(streamable_http_client(url, http_client=client), read_timeout_seconds=120)


async def walk(client: Client, shop: Indexed) -> dict[str, Any]:
    """The agent's path: search, then symbol, callers and impact on the top hit."""
    async with client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) >= TOOLS
        assert tools["search"].output_schema is not None
        assert "as_of" in tools["callers"].input_schema["properties"]
        found = await client.call_tool(
            "search", {"query": "capture payment", "repository": shop.repo}
        )
        assert not found.is_error, found.content
        hits = found.structured_content["hits"]
        top = hits[0]
        files = found.structured_content["files"]
        assert files[0]["path"] == top["evidence"]["path"] == "billing/payments.py"
        assert files[0]["hit_ids"]
        assert len(files) <= 10
        symbol = await client.call_tool("symbol", {"id": top["id"]})
        callers = await client.call_tool("callers", {"id": top["id"], "depth": 2})
        impact = await client.call_tool("impact", {"id": top["id"]})
        assert "include_guesses" in tools["impact"].input_schema["properties"]
        guessed = await client.call_tool("impact", {"id": top["id"], "include_guesses": True})
        assert not guessed.is_error, guessed.content
        assert len(guessed.structured_content["callers"]) >= len(
            impact.structured_content["callers"]
        )
        history = await client.call_tool("history", {"id": top["id"]})
        old = await client.call_tool(
            "search",
            {
                "query": "charge_card",
                "repository": shop.repo,
                "as_of": {"valid_at": "2025-01-15T00:00:00Z"},
            },
        )
        req = await client.call_tool("requirement", {"id": "REQ-001", "repository": shop.repo})
        tests = await client.call_tool(
            "tests_for", {"requirement": "REQ-001", "repository": shop.repo}
        )
        return {
            "requirement": req.structured_content,
            "tests_for": tests.structured_content,
            "top": top,
            "symbol": symbol.structured_content,
            "callers": callers.structured_content,
            "impact": impact.structured_content,
            "history": history.structured_content,
            "old": old.structured_content,
        }


def check_walk(answers: dict[str, Any], shop: Indexed) -> None:
    top = answers["top"]
    assert top["qualified_name"] == "billing.payments.capture_payment"
    assert top["evidence"]["path"] == "billing/payments.py"
    assert top["evidence"]["commit"] == shop.shas[1]
    assert {m["retriever"] for m in top["matches"]} >= {"fulltext"}
    assert answers["symbol"]["found"] is True
    assert answers["symbol"]["kind"] == "function"
    assert answers["symbol"]["evidence"]["line_start"] == 16
    calls = {c["qualified_name"]: c for c in answers["callers"]["calls"]}
    assert "billing.orders.place_order" in calls
    assert calls["billing.orders.place_order"]["evidence"]["path"] == "billing/orders.py"
    assert calls["billing.orders.place_order"]["evidence"]["commit"] == shop.shas[1]
    assert "tests/test_orders.py:test_place_order" in calls or any(
        c["depth"] == 2 for c in calls.values()
    )
    tests = [t["qualified_name"] for t in answers["impact"]["tests"]]
    assert any("test_place_order" in t for t in tests)
    versions = answers["history"]["versions"]
    assert [v["commit"] for v in versions] == [shop.shas[1]]  # renamed: a new symbol at C2
    assert answers["old"]["hits"][0]["qualified_name"] == "billing.payments.charge_card"
    assert answers["old"]["hits"][0]["evidence"]["commit"] == shop.shas[0]
    req = answers["requirement"]
    assert req["found"] is True
    assert "capture the payment" in req["text"]
    assert req["evidence"] == {
        "path": "docs/requirements.md",
        "line_start": 3,
        "line_end": 3,
        "commit": shop.shas[1],
    }
    # no trace file and no proposal links a test to REQ-001 in this fixture
    assert answers["tests_for"] == {"requirement": "REQ-001", "links": []}


class TestStdio:
    """`strata mcp` over stdio, keyed by STRATA_API_KEY."""

    def test_search_symbol_callers_impact(
        self, settings: Settings, shop: Indexed, make_key: Callable[..., str]
    ) -> None:
        answers = anyio.run(walk, stdio(settings, make_key()), shop)
        check_walk(answers, shop)

    def test_without_a_key_every_tool_says_so(self, settings: Settings, shop: Indexed) -> None:
        async def go() -> Any:
            async with stdio(settings, None) as client:
                return await client.call_tool("search", {"query": "x", "repository": shop.repo})

        result = anyio.run(go)
        assert result.is_error
        assert "UNAUTHORIZED" in result.content[0].text
        assert "STRATA_API_KEY" in result.content[0].text


class TestHttp:
    """`strata mcp --transport http`: bearer keys, the same scopes as GraphQL."""

    def test_search_symbol_callers_impact(
        self, mcp_http: str, shop: Indexed, make_key: Callable[..., str]
    ) -> None:
        check_walk(anyio.run(walk, http(mcp_http, make_key()), shop), shop)

    def test_no_key_is_401(self, mcp_http: str) -> None:
        import httpx

        response = httpx.post(mcp_http, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert response.status_code == 401
        assert response.json()["error"]["data"]["code"] == "UNAUTHORIZED"
        assert response.headers["www-authenticate"].startswith("Bearer")

    def test_client_without_key_fails_clearly(self, mcp_http: str) -> None:
        async def go() -> None:
            async with http(mcp_http, None) as client:
                await client.list_tools()

        with pytest.raises(Exception) as caught:  # noqa: PT011 - the SDK's own error types
            anyio.run(go)
        assert "UNAUTHORIZED: missing bearer token" in repr(caught.value)

    def test_bad_arguments_and_other_repositories(
        self, mcp_http: str, shop: Indexed, make_key: Callable[..., str]
    ) -> None:
        async def go() -> dict[str, Any]:
            async with http(mcp_http, make_key(repos="another-repo")) as client:
                return {
                    "missing": await client.call_tool("search", {"repository": shop.repo}),
                    "mistyped": await client.call_tool(
                        "callers", {"id": "x|main|a.py|f", "depth": "deep"}
                    ),
                    "range": await client.call_tool(
                        "search", {"query": "x", "repository": shop.repo, "first": 500}
                    ),
                    "hidden": await client.call_tool(
                        "search", {"query": "payment", "repository": shop.repo}
                    ),
                    "unknown_id": await client.call_tool("callers", {"id": "nope|main|a.py|f"}),
                    "empty": await client.call_tool(
                        "search", {"query": "  ", "repository": "another-repo"}
                    ),
                }

        got = anyio.run(go)
        assert all(r.is_error for r in got.values()), {k: r.is_error for k, r in got.items()}
        text = {k: r.content[0].text for k, r in got.items()}
        assert "query" in text["missing"]
        assert "depth" in text["mistyped"]
        assert "first" in text["range"]
        # the SDK prefixes "Error executing tool <name>: " to the tool's own message
        assert "search: NOT_FOUND: repository" in text["hidden"]
        assert "callers: NOT_FOUND: no symbol 'nope|main|a.py|f'" in text["unknown_id"]
        assert "VALIDATION_ERROR: the search query is empty" in text["empty"]

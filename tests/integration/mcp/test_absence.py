"""No silent empties over MCP: unknown, malformed and too-early questions say why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from tests.integration.mcp.test_mcp import http
from tests.integration.search.conftest import Indexed

BEFORE = {"valid_at": "2024-06-01T00:00:00Z"}  # the shop's first commit is 2025-01-01


async def ask(url: str, key: str, shop: Indexed) -> dict[str, Any]:
    async with http(url, key) as client:
        found = await client.call_tool(
            "search", {"query": "capture_payment", "repository": shop.repo}
        )
        top = found.structured_content["hits"][0]["id"]
        calls = {
            "early_callers": ("callers", {"id": top, "as_of": BEFORE}),
            "early_search": (
                "search",
                {"query": "charge", "repository": shop.repo, "as_of": BEFORE},
            ),
            "malformed": ("callers", {"id": "not-an-id"}),
            "malformed_history": ("history", {"id": "nope"}),
            "unknown_symbol": ("symbol", {"id": f"{shop.repo}|main|billing/payments.py|nothing"}),
            "unknown_repo_symbol": ("symbol", {"id": "no-such-repo|main|a.py|f"}),
            "unknown_history": ("history", {"id": f"{shop.repo}|main|a.py|gone"}),
            "unknown_tests": ("tests_for", {"requirement": "REQ-999", "repository": shop.repo}),
            "unknown_changes": (
                "changes",
                {
                    "repository": "no-such-repo",
                    "start": "2020-01-01T00:00:00Z",
                    "end": "2026-01-01T00:00:00Z",
                },
            ),
            "early_requirement": (
                "requirement",
                {"id": "REQ-001", "repository": shop.repo, "as_of": BEFORE},
            ),
            "impact_cut": ("impact", {"id": top, "first": 1}),
            "impact_whole": ("impact", {"id": top, "first": 50}),
        }
        return {name: await client.call_tool(tool, args) for name, (tool, args) in calls.items()}


def text(result: Any) -> str:
    return str(result.content[0].text)


class TestAbsence:
    """Each empty answer is a typed tool error or carries its reason; cut lists say so."""

    def test_reasons(self, mcp_http: str, shop: Indexed, make_key: Callable[..., str]) -> None:
        got = anyio.run(ask, mcp_http, make_key(), shop)
        for name in ("early_callers", "early_search"):
            assert got[name].is_error, name
            assert "BEFORE_HISTORY" in text(got[name])
            assert "2025-01-01" in text(got[name])  # the first indexed commit's time
        for name in ("malformed", "malformed_history"):
            assert got[name].is_error
            assert "VALIDATION_ERROR" in text(got[name])
        symbol = got["unknown_symbol"].structured_content
        assert symbol["found"] is False
        assert symbol["reason"]["code"] == "NOT_FOUND"
        assert "at any time" in symbol["reason"]["message"]
        other = got["unknown_repo_symbol"].structured_content
        assert "not indexed, or not readable" in other["reason"]["message"]
        for name in ("unknown_history", "unknown_tests", "unknown_changes"):
            assert got[name].is_error, (name, got[name].content)
            assert "NOT_FOUND" in text(got[name])
        early = got["early_requirement"].structured_content
        assert early["found"] is False
        assert early["reason"]["code"] == "BEFORE_HISTORY"
        assert early["reason"]["first_indexed_at"].startswith("2025-01-01")

    def test_impact_says_it_was_cut(
        self, mcp_http: str, shop: Indexed, make_key: Callable[..., str]
    ) -> None:
        got = anyio.run(ask, mcp_http, make_key(), shop)
        cut, whole = got["impact_cut"].structured_content, got["impact_whole"].structured_content
        assert whole["total_callers"] >= 2
        assert len(cut["callers"]) == 1
        assert cut["truncated"] is True
        assert "callers" in cut["truncated_lists"]
        assert whole["truncated"] is False
        assert len(whole["callers"]) == whole["total_callers"]

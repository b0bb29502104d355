"""The MCP `cards` and `lint` tools over stdio, on the same key checks as every tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from strata.cards import CardService
from strata.settings import Settings
from tests.integration.cards.conftest import Indexed
from tests.integration.mcp.conftest import make_key
from tests.integration.mcp.test_mcp import stdio

__all__ = ["make_key"]


def test_cards_and_lint(
    settings: Settings, indexed: Indexed, service: CardService, make_key: Callable[..., str]
) -> None:
    service.build(indexed.repo)

    async def go() -> tuple[Any, Any, Any]:
        async with stdio(settings, make_key()) as client:
            cards = await client.call_tool("cards", {"repository": indexed.repo})
            queue = await client.call_tool(
                "cards", {"repository": indexed.repo, "needs_review": True}
            )
            lint = await client.call_tool("lint", {"repository": indexed.repo})
            return cards, queue, lint

    cards, queue, lint = anyio.run(go)
    assert not cards.is_error, cards.content
    found = {c["name"]: c for c in cards.structured_content["cards"]}
    assert sorted(found) == ["alpha", "beta"]
    assert found["alpha"]["stale"] is False
    assert "## Used by\n\n- `beta`: imports 1, calls 1" in found["alpha"]["markdown"]
    assert queue.structured_content["cards"] == []
    assert not lint.is_error, lint.content
    assert lint.structured_content["ok"] is True
    assert lint.structured_content["report"]["metrics"]["checked"]["cards"] == 2

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


def test_review_card_needs_write(
    settings: Settings, indexed: Indexed, service: CardService, make_key: Callable[..., str]
) -> None:
    """review_card takes a queued card out of the queue; a read key may not."""
    from tests.integration.cards.test_review import INVENTED, queue_beta

    queue_beta(service, indexed, INVENTED)
    args = {"repository": indexed.repo, "package": "beta", "decision": "reject", "note": "no"}

    async def go(token: str) -> Any:
        async with stdio(settings, token) as client:
            return await client.call_tool("review_card", args)

    denied = anyio.run(go, make_key("read"))
    assert denied.is_error
    assert service.cards(indexed.repo, package="beta")[0].status == "needs_review"
    done = anyio.run(go, make_key("write"))
    assert not done.is_error, done.content
    assert done.structured_content["status"] == "rejected"
    assert service.needs_review(indexed.repo) == []

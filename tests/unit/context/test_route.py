"""The router: one intent per task, by fixed patterns in a fixed order."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from strata.context.route import Intent, asks_change, route


class TestIntent:
    """Each family of wording lands on its intent; the order of the checks decides ties."""

    @pytest.mark.parametrize(
        ("task", "intent"),
        [
            ("REQ-012: is it implemented?", Intent.requirement),
            ("what tests cover req-7 and who calls it", Intent.requirement),
            ("what changed in pricing.py", Intent.what_changed),
            ("show changes since 2025-05-01", Intent.what_changed),
            ("who calls discount", Intent.impact),
            ("what would break if I change Cart.total", Intent.impact),
            ("impact of renaming `round_price`", Intent.impact),
            ("which tests cover Cart.total", Intent.find_tests),
            ("is discount tested?", Intent.find_tests),
            ("entrypoints that reach discount", Intent.find_entrypoints),
            ("which HTTP routes end up in checkout", Intent.find_entrypoints),
            ("trace the checkout flow", Intent.trace_flow),
            ("how does discount work step by step", Intent.trace_flow),
            ("explain the Cart class", Intent.explain),
            ("discount", Intent.explain),
        ],
    )
    def test_intent(self, task: str, intent: Intent) -> None:
        assert route(task).intent is intent

    def test_deterministic(self) -> None:
        assert route("who calls Cart.total?") == route("who calls Cart.total?")


class TestTargets:
    """What the text names explicitly is pulled out, most explicit first."""

    def test_requirement_ids_upper_cased_once(self) -> None:
        assert route("REQ-12 and req-12 and REQ-3").requirement_ids == ("REQ-12", "REQ-3")

    def test_symbol_id(self) -> None:
        r = route("explain shop|main|cart.py|Cart.total please")
        assert r.symbol_ids == ("shop|main|cart.py|Cart.total",)

    def test_names(self) -> None:
        r = route("who calls `round_price` from cart.Cart.total() or pricing.py:discount")
        assert r.names[:3] == ("round_price", "pricing.py:discount", "cart.Cart.total")

    def test_snake_and_camel(self) -> None:
        assert route("explain build_context and SearchService").names == (
            "build_context",
            "SearchService",
        )

    def test_plain_words_are_not_names(self) -> None:
        assert route("explain how the cart is priced. Thanks.").names == ()

    def test_since(self) -> None:
        assert route("changes since 2025-05-15").since == datetime(2025, 5, 15, tzinfo=UTC)
        assert route("changes since 2025-13-45").since is None


@pytest.mark.parametrize(
    ("task", "change"),
    [
        ("fix the bug where proxies from the environment win", True),
        ("Crash when the cookie header is empty", True),
        ("add retries to the HTTP adapter", True),
        ("explain `Session.send`", False),
        ("who calls `total`?", False),
        ("prefix handling in the router", False),  # 'fix' only as a whole word
    ],
)
def test_asks_change(task: str, change: bool) -> None:
    assert asks_change(task) is change

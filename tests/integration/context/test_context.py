"""Context packs over a repository indexed into the real Neo4j: routing to the right
evidence, the sufficiency gate, citations, and the budget on real packs."""

from __future__ import annotations

from datetime import timedelta

import pytest

from strata.context.builder import ContextBuilder
from strata.context.pack import Pack
from strata.context.tokens import count_tokens, usable
from strata.errors import NotFound, ValidationError
from strata.temporal import AsOf
from tests.integration.context.conftest import C1, C2, Shop


def texts(pack: Pack, section: str) -> list[str]:
    return [line.text for line in pack.lines if line.section == section]


def assert_cited(pack: Pack, shop: Shop) -> None:
    shas = {sha[:12] for sha in shop.shas}
    for line in pack.lines:
        assert line.cite.commit is not None
        assert line.cite.commit[:12] in shas, line
        assert line.cite.path, line
    for row in pack.markdown().splitlines():
        assert row.startswith(("# ", "## ", "- "))
        if row.startswith("- "):
            assert "@" in row.rsplit("[", 1)[1]


class TestIntents:
    """Each intent gathers its own evidence, cited path:line@commit."""

    def test_explain(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("explain `discount`", shop.name, budget_tokens=600)
        assert pack.sufficient
        assert pack.intent == "explain"
        assert pack.target_name == "pricing.discount"
        assert (
            texts(pack, "Target")[0] == "function `pricing.discount` — `def discount(total, code)`"
        )
        assert "called by `cart.Cart.total` (import, 0.95)" in texts(pack, "Callers")
        assert len(texts(pack, "History")) == 2  # the body changed at C2
        assert_cited(pack, shop)

    def test_fix_task_names_the_tests_to_run(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("fix the bug in `Cart.total` with empty carts", shop.name)
        assert pack.intent == "explain"
        assert texts(pack, "Tests") == ["test `test_cart.test_total` reaches it (depth 1)"]
        plain = builder.build("explain `Cart.total`", shop.name)
        assert texts(plain, "Tests") == []  # not a change: no tests asked for

    def test_search_chosen_target_shows_the_runners_up(
        self, builder: ContextBuilder, shop: Shop
    ) -> None:
        pack = builder.build("how is the price rounded", shop.name, budget_tokens=2000)
        assert pack.sufficient
        assert pack.candidates
        shown = texts(pack, "Candidates")
        assert shown
        assert shown[0].endswith(f"(id `{pack.candidates[0].key}`)")
        named = builder.build("explain `discount`", shop.name, budget_tokens=2000)
        assert texts(named, "Candidates") == []  # the task named its target

    def test_find_tests(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("which tests cover Cart.total?", shop.name)
        assert pack.sufficient
        assert texts(pack, "Tests") == ["test `test_cart.test_total` reaches it (depth 1)"]
        assert [line.cite.path for line in pack.lines if line.section == "Tests"] == [
            "test_cart.py"
        ]

    def test_no_test_reaches_is_insufficient(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("is `round_price` tested through `sum_items`? tests", shop.name)
        assert pack.intent == "find_tests"
        # round_price is reached by Cart.total, which test_total calls: found at depth 2
        assert pack.sufficient
        lone = builder.build("tests for `sum_items`", shop.name)
        assert not lone.sufficient
        assert lone.reasons == ["no test reaches pricing.sum_items"]
        assert texts(lone, "Gaps") == ["insufficient: no test reaches pricing.sum_items"]

    def test_entrypoints(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("entrypoints that reach `discount`", shop.name)
        assert pack.sufficient
        assert texts(pack, "Entrypoints") == ["entrypoint `cart.checkout` reaches it (depth 2)"]

    def test_impact_counts_unresolved(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("what breaks if I change `round_price`", shop.name)
        assert pack.intent == "impact"
        callers = texts(pack, "Callers")
        assert callers[0] == "called by `cart.Cart.total` (import, 0.95)"
        assert any("cart.checkout" in c for c in callers)

    def test_flow_outline_from_the_blob(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("trace the flow of `discount` step by step", shop.name)
        outline = texts(pack, "Outline")
        assert outline[:3] == [
            'if: `if code == "VIP":`',
            "  return: `return total * 0.25`",
            'elif: `elif code == "HALF":`',
        ]
        assert outline[-1] == "return: `return 0`"
        # as of C1 the blob of that commit is read: the old body
        old = builder.build(
            "trace the flow of `discount`", shop.name, as_of=AsOf.at(C1 + timedelta(days=1))
        )
        assert texts(old, "Outline")[1] == "  return: `return total * 0.2`"
        assert {line.cite.commit for line in old.lines if line.section == "Outline"} == {
            shop.shas[0]
        }

    def test_what_changed(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("what changed since 2025-05-15", shop.name)
        assert pack.sufficient
        assert texts(pack, "Changes") == [
            "added function `cart.empty` on 2025-07-01",
            "moved function `text.slugify` on 2025-06-01 (was util.py:slugify)",
            "renamed function `pricing.sum_items` on 2025-06-01 (was pricing.py:legacy_total)",
            "modified function `pricing.discount` on 2025-06-01",
        ]
        mine = builder.build("what changed in `discount` since 2025-05-15", shop.name)
        assert texts(mine, "Changes") == [
            "modified function `pricing.discount` on 2025-06-01",  # the target's own first
            "renamed function `pricing.sum_items` on 2025-06-01 (was pricing.py:legacy_total)",
        ]
        only = builder.build("what changed in pricing.py", shop.name)
        assert [t.split()[0] for t in texts(only, "Changes")] == ["renamed", "modified"]

    def test_requirement_missing(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("REQ-404: where is it implemented?", shop.name)
        assert not pack.sufficient
        assert pack.reasons == [f"no requirement REQ-404 in {shop.name} as of then"]
        assert pack.lines[0].cite.commit == shop.shas[-1]

    def test_unresolved_target(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("explain `no_such_function_anywhere`", shop.name)
        assert pack.target is None
        assert not pack.sufficient
        assert pack.reasons == [
            f"no symbol named no_such_function_anywhere in {shop.name} as of then"
        ]
        assert pack.lines[0].cite.commit == shop.shas[-1]  # the gap cites the indexed head
        vague = builder.build("explain zzqx qqzz", shop.name)
        assert vague.reasons == ["no symbol in the task or among the search hits"]

    def test_misnamed_target_gives_candidates(self, builder: ContextBuilder, shop: Shop) -> None:
        pack = builder.build("tests for `Cart.totals`", shop.name)
        assert pack.target is None
        assert not pack.sufficient
        assert "cart.Cart.total" in [c.qualified_name for c in pack.candidates]
        assert any("cart.Cart.total" in t for t in texts(pack, "Candidates"))


class TestBudget:
    """No pack ever exceeds its budget, counted with the real tokenizer."""

    TASKS = (
        "explain `discount`",
        "which tests cover Cart.total?",
        "trace the flow of `discount` step by step",
        "what changed since 2025-05-15",
        "who calls round_price",
        "explain how the cart is priced",
    )

    @pytest.mark.parametrize("budget", [50, 60, 80, 120, 200, 350, 500, 1000, 2000])
    def test_within(self, builder: ContextBuilder, shop: Shop, budget: int) -> None:
        for task in self.TASKS:
            pack = builder.build(task, shop.name, budget_tokens=budget)
            assert pack.tokens == count_tokens(pack.markdown())
            assert pack.tokens <= usable(budget), (task, budget)
            assert pack.lines, "the headline survives every budget"

    def test_more_budget_keeps_more(self, builder: ContextBuilder, shop: Shop) -> None:
        small = builder.build("explain `discount`", shop.name, budget_tokens=50)
        large = builder.build("explain `discount`", shop.name, budget_tokens=2000)
        assert small.dropped > 0
        assert large.dropped == 0
        assert len(large.lines) > len(small.lines)


class TestBadInput:
    """Bad input is a typed error; an unknown repository is NotFound."""

    @pytest.mark.parametrize("budget", [0, 1, 49, 20_001, 1_000_000])
    def test_budget(self, builder: ContextBuilder, shop: Shop, budget: int) -> None:
        with pytest.raises(ValidationError):
            builder.build("explain `discount`", shop.name, budget_tokens=budget)

    @pytest.mark.parametrize("task", ["", "  ", "x" * 5000, "bin\x00ary"])
    def test_task(self, builder: ContextBuilder, shop: Shop, task: str) -> None:
        with pytest.raises(ValidationError):
            builder.build(task, shop.name)

    def test_unknown_repository(self, builder: ContextBuilder) -> None:
        with pytest.raises(NotFound):
            builder.build("explain `discount`", "no-such-repository-here")

    def test_unreadable_repository(self, builder: ContextBuilder, shop: Shop) -> None:
        with pytest.raises(NotFound):
            builder.build("explain `discount`", shop.name, repos=["someone-else"])


def test_as_of_before_a_change(builder: ContextBuilder, shop: Shop) -> None:
    """As of C2 (before cart.empty existed) the Cart class has one fewer caller."""
    now = builder.build("explain the `Cart` class", shop.name, budget_tokens=2000)
    then = builder.build(
        "explain the `Cart` class",
        shop.name,
        budget_tokens=2000,
        as_of=AsOf.at(C2 + timedelta(days=1)),
    )
    assert "called by `cart.empty` (local, 1.00)" in texts(now, "Callers")
    assert "called by `cart.empty` (local, 1.00)" not in texts(then, "Callers")

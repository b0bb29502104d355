"""The pure bitemporal planner: what each change expires and creates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from strata.errors import TemporalError
from strata.temporal import AsOf, Version, as_of_predicate, aware, content_hash, plan_set

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def d(n: int) -> datetime:
    return datetime(2025, 1, 1, tzinfo=UTC) + timedelta(days=n)


def stored(h: str, start: int, end: int | None, created: datetime = T0, ref: str = "r1") -> Version:
    return Version(h, d(start), None if end is None else d(end), created, ref=ref)


class TestAware:
    """Naive datetimes are refused; aware ones are normalised to UTC."""

    def test_naive_is_refused(self) -> None:
        with pytest.raises(TemporalError, match="naive"):
            aware(datetime(2026, 1, 1))  # noqa: DTZ001 - the point of the test

    def test_offset_is_normalised(self) -> None:
        value = aware(datetime(2026, 1, 1, 2, tzinfo=timezone(timedelta(hours=2))))
        assert value == datetime(2026, 1, 1, tzinfo=UTC)
        assert value.tzinfo is UTC

    def test_as_of_defaults_to_now(self) -> None:
        as_of = AsOf.at()
        assert as_of.valid_at.tzinfo is UTC
        assert as_of.known_at == as_of.valid_at


class TestPlanSet:
    """plan_set expires overlapping current versions and re-creates their untouched parts."""

    def test_first_assert_creates_one_version(self) -> None:
        current, plan = plan_set([], content="a", payload={}, start=d(0), end=None, tx=T0)
        assert plan.expire == []
        assert [(v.hash, v.valid_at, v.invalid_at) for v in plan.create] == [("a", d(0), None)]
        assert current == plan.create

    def test_identical_reassert_is_a_noop(self) -> None:
        old = stored("a", 0, None)
        current, plan = plan_set([old], content="a", payload={}, start=d(5), end=None, tx=T0)
        assert plan.empty
        assert current == [old]

    def test_change_closes_the_open_version_in_place(self) -> None:
        old = stored("a", 0, None)
        tx = T0 + timedelta(hours=1)
        current, plan = plan_set([old], content="b", payload={}, start=d(3), end=None, tx=tx)
        assert plan.expire == []
        assert [(v.ref, v.invalid_at, v.invalidated_at) for v in plan.close] == [("r1", d(3), tx)]
        assert [(v.hash, v.valid_at, v.invalid_at) for v in plan.create] == [("b", d(3), None)]
        assert [(v.hash, v.valid_at, v.invalid_at) for v in current] == [
            ("a", d(0), d(3)),
            ("b", d(3), None),
        ]

    def test_closed_in_place_reads_open_before_it_was_closed(self) -> None:
        tx = T0 + timedelta(hours=1)
        _, plan = plan_set(
            [stored("a", 0, None)], content="b", payload={}, start=d(3), end=None, tx=tx
        )
        closed = plan.close[0]
        assert closed.visible(d(5), T0)  # before tx Strata believed 'a' open-ended
        assert not closed.visible(d(5), tx)
        assert closed.visible(d(2), tx)

    def test_change_of_a_closed_version_expires_and_copies(self) -> None:
        old = Version("a", d(0), d(5), T0, invalidated_at=T0, ref="r1")
        tx = T0 + timedelta(hours=1)
        _, plan = plan_set([old], content="b", payload={}, start=d(3), end=None, tx=tx)
        assert [v.ref for v in plan.expire] == ["r1"]
        made = sorted((v.hash, v.valid_at, v.invalid_at, v.copy_of) for v in plan.create)
        assert made == [("a", d(0), d(3), "r1"), ("b", d(3), None, None)]

    def test_bounded_correction_keeps_both_sides(self) -> None:
        old = stored("a", 0, None)
        _, plan = plan_set([old], content="b", payload={}, start=d(2), end=d(4), tx=T0)
        made = sorted((v.hash, v.valid_at, v.invalid_at) for v in plan.create)
        assert made == [("a", d(0), d(2)), ("a", d(4), None), ("b", d(2), d(4))]

    def test_invalidate_closes_valid_time(self) -> None:
        old = stored("a", 0, None)
        current, plan = plan_set([old], content=None, payload=None, start=d(3), end=None, tx=T0)
        assert [(v.valid_at, v.invalid_at) for v in current] == [(d(0), d(3))]
        assert plan.size() == (0, 1, 0)

    def test_invalidate_from_the_start_expires(self) -> None:
        old = stored("a", 2, None)
        current, plan = plan_set([old], content=None, payload=None, start=d(1), end=None, tx=T0)
        assert current == []
        assert plan.size() == (1, 0, 0)

    def test_invalidate_of_nothing_is_a_noop(self) -> None:
        old = stored("a", 0, 2)
        _, plan = plan_set([old], content=None, payload=None, start=d(3), end=None, tx=T0)
        assert plan.empty

    def test_disjoint_validity_is_not_merged(self) -> None:
        """A fact true on [0,2) and again from 5 stays two versions."""
        old = stored("a", 0, 2)
        current, plan = plan_set([old], content="a", payload={}, start=d(5), end=None, tx=T0)
        assert [(v.valid_at, v.invalid_at) for v in current] == [(d(0), d(2)), (d(5), None)]
        assert plan.expire == []

    def test_planned_then_replaced_in_one_transaction_is_never_stored(self) -> None:
        current, plan = plan_set([], content="a", payload={}, start=d(0), end=None, tx=T0)
        current, plan = plan_set(
            current, content="b", payload={}, start=d(0), end=None, tx=T0, plan=plan
        )
        assert [v.hash for v in plan.create] == ["b"]
        assert plan.expire == []

    def test_backwards_transaction_time_is_refused(self) -> None:
        old = stored("a", 0, None, created=T0)
        with pytest.raises(TemporalError, match="backwards"):
            plan_set([old], content="b", payload={}, start=d(1), end=None, tx=T0 - timedelta(1))

    def test_empty_interval_is_refused(self) -> None:
        with pytest.raises(TemporalError, match="empty valid interval"):
            plan_set([], content="a", payload={}, start=d(2), end=d(2), tx=T0)


class TestVersion:
    """The Python as-of rule matches the documented half-open intervals."""

    def test_visibility_is_half_open_on_both_axes(self) -> None:
        v = Version("a", d(0), d(2), T0, T0 + timedelta(hours=1))
        assert v.visible(d(0), T0)
        assert not v.visible(d(2), T0)
        assert not v.visible(d(1), T0 + timedelta(hours=1))
        assert not v.visible(d(1), T0 - timedelta(seconds=1))

    def test_cypher_predicate_names_both_axes(self) -> None:
        text = as_of_predicate("r")
        for part in (
            "r.valid_at <= datetime($valid_at)",
            "r.invalid_at > datetime($valid_at)",
            "r.created_at <= datetime($known_at)",
            "r.expired_at > datetime($known_at)",
        ):
            assert part in text
        with pytest.raises(ValueError, match="not a Cypher variable"):
            as_of_predicate("r) DETACH DELETE (n")


class TestContentHash:
    """Content hashes ignore key order and None, and see every value."""

    def test_order_and_none_do_not_matter(self) -> None:
        assert content_hash({"a": 1, "b": None, "c": "x"}) == content_hash({"c": "x", "a": 1})

    def test_values_matter(self) -> None:
        assert content_hash({"a": 1}) != content_hash({"a": 2})

    def test_the_hash_of_a_content_is_fixed(self) -> None:
        """Stored versions carry these hashes and a re-index compares against them: the
        same content must hash to the same text in every version of the code."""
        content = {
            "name": "slugify",
            "line_start": 3,
            "tags": ("a", "b"),
            "at": datetime(2025, 1, 1, 12, tzinfo=timezone(timedelta(hours=2))),
            "doc": "é",
            "none": None,
            "ratio": 0.5,
            "test": False,
        }
        assert content_hash(content) == "7ea946c49f20f0cb538b6a3b"

"""The solver's reverse maps: one item until a second comes."""

from __future__ import annotations

from strata.code.flow.bags import Bag, bag_add, bag_items


def test_one_item_is_held_as_itself_until_another_comes() -> None:
    table: dict[str, Bag[tuple[str, int]]] = {}
    assert list(bag_items(table.get("x"))) == []
    bag_add(table, "x", ("v", 1))
    bag_add(table, "x", ("v", 1))  # the same again: still one
    assert table["x"] == ("v", 1)
    assert list(bag_items(table["x"])) == [("v", 1)]
    bag_add(table, "x", ("v", 2))
    bag_add(table, "x", ("v", 3))
    held: object = table["x"]
    assert held == {("v", 1), ("v", 2), ("v", 3)}
    assert sorted(bag_items(table["x"])) == [("v", 1), ("v", 2), ("v", 3)]


def test_numbers_keep_the_order_a_set_of_them_had() -> None:
    # The worklist queues readers in a bag's order: as a set built by adds had it.
    table: dict[str, Bag[int]] = {}
    numbers = [907, 3, 65, 12, 3, 500]
    for n in numbers:
        bag_add(table, "x", n)
    grown: set[int] = set()
    for n in numbers:
        grown.add(n)
    assert list(bag_items(table["x"])) == list(grown)

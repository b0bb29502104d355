"""A symbol table refreshed snapshot after snapshot holds what one built afresh holds."""

from __future__ import annotations

from collections import Counter

from strata.code.languages import parse_file
from strata.code.model import FileExtract
from strata.code.symbols import SymbolTable

BILLING = b"""
class Ledger:
    def post(self, amount):
        return amount

def settle(ledger):
    return ledger.post(1)

LIMIT = 3
"""

ORDERS = b"""
def settle(order):
    return order

def place(order):
    return settle(order)
"""


def _table(files: dict[str, FileExtract]) -> SymbolTable:
    table = SymbolTable()
    table.refresh(files)
    return table


def _held(table: SymbolTable) -> tuple[dict[tuple[str, str], object], dict[str, set[object]]]:
    callables = {name: set(targets) for name, targets in table.callables.items() if targets}
    assert all(len(t) == len(set(t)) for t in table.callables.values())  # no target twice
    # The names counted are exactly those of the declarations held, each as often.
    assert table.names == Counter(symbol.name for symbol in table.symbols.values())
    return dict(table.symbols), callables


class TestSymbolTable:
    def test_refreshing_reads_only_the_changed_files_and_matches_a_new_build(self) -> None:
        first = {
            "billing.py": parse_file("billing.py", BILLING),
            "orders.py": parse_file("orders.py", ORDERS),
        }
        kept = _table(first)
        assert kept.symbols[("orders.py", "place")].kind == "function"
        assert {t.path for t in kept.callables["settle"]} == {"billing.py", "orders.py"}
        # billing.py changes (post renamed), orders.py is the same object, shipping.py is new
        second = {
            "billing.py": parse_file("billing.py", BILLING.replace(b"post", b"book")),
            "orders.py": first["orders.py"],
            "shipping.py": parse_file("shipping.py", b"def ship(order):\n    return order\n"),
        }
        assert kept.refresh(second) == 2
        assert _held(kept) == _held(_table(second))
        assert "post" not in kept.callables
        assert ("billing.py", "Ledger.book") in kept.symbols
        # orders.py goes: its declarations leave, billing's settle stays
        third = {p: e for p, e in second.items() if p != "orders.py"}
        assert kept.refresh(third) == 0
        assert _held(kept) == _held(_table(third))
        assert [t.path for t in kept.callables["settle"]] == ["billing.py"]
        assert "place" not in kept.callables
        assert "place" not in kept.names
        assert kept.names["settle"] == 1
        assert kept.refresh({}) == 0
        assert kept.names == {}

    def test_an_equal_parse_that_is_another_object_is_read_again(self) -> None:
        kept = _table({"billing.py": parse_file("billing.py", BILLING)})
        assert kept.refresh({"billing.py": parse_file("billing.py", BILLING)}) == 1
        assert len(kept.callables["settle"]) == 1

"""A GraphQL answer becomes rows (first list, dotted columns) and says when it is cut."""

from __future__ import annotations

import pytest

from strata.cli.answer import rows_of
from strata.cli.output import cell, compact_line


class TestRowsOf:
    """The first list in document order is the table; what sits beside it becomes a note."""

    def test_first_list_with_nested_columns(self) -> None:
        rows = rows_of(
            {
                "impact": {
                    "symbol": {"name": "total"},
                    "callers": [
                        {"qualifiedName": "a.b", "evidence": {"path": "a.py", "line": 3}},
                        {"qualifiedName": "a.c", "evidence": {"path": "c.py"}, "depth": 2},
                    ],
                    "tests": [{"qualifiedName": "t"}],
                    "truncated": True,
                }
            }
        )
        assert rows.path == "impact.callers"
        assert rows.headers == ["qualifiedName", "evidence.path", "evidence.line", "depth"]
        assert rows.rows == [["a.b", "a.py", 3, None], ["a.c", "c.py", None, 2]]
        assert rows.cut
        assert rows.notes() == [
            "impact.callers is cut, more rows than shown (symbol.name=total, truncated=true)"
        ]

    def test_page_info_has_next_page_is_a_cut(self) -> None:
        rows = rows_of(
            {
                "changes": {
                    "entries": [{"kind": "added"}],
                    "pageInfo": {"hasNextPage": True, "endCursor": "abc"},
                }
            }
        )
        assert rows.cut
        assert "pageInfo.endCursor=abc" in rows.notes()[0]

    def test_uncut_list_has_no_note(self) -> None:
        rows = rows_of({"callers": {"nodes": [{"x": 1}], "hasNextPage": False}})
        assert not rows.cut
        assert rows.notes() == []

    def test_empty_list_says_so_with_its_reason(self) -> None:
        rows = rows_of({"history": {"versions": [], "reason": "BEFORE_HISTORY"}})
        assert rows.rows == []
        assert rows.notes() == ["history.versions is empty (reason=BEFORE_HISTORY)"]

    def test_no_list_is_one_row(self) -> None:
        rows = rows_of({"symbol": {"name": "f", "span": {"start": 1}}})
        assert rows.headers == ["symbol.name", "symbol.span.start"]
        assert rows.rows == [["f", 1]]

    def test_scalar_items_are_one_column(self) -> None:
        assert rows_of({"names": ["a", "b"]}).rows == [["a"], ["b"]]

    def test_no_data(self) -> None:
        assert rows_of(None).rows == []


class TestCells:
    """A compact row is one line whatever the values hold."""

    @pytest.mark.parametrize(
        ("value", "shown"),
        [(None, ""), (True, "true"), ("a\tb\nc", "a b c"), ([1, "x"], '[1,"x"]'), (2.5, "2.5")],
    )
    def test_cell(self, value: object, shown: str) -> None:
        assert cell(value) == shown

    def test_compact_line(self) -> None:
        assert compact_line(["a", None, {"k": "v\n"}]) == 'a\t\t{"k":"v\\n"}'

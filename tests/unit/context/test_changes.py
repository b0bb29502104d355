"""Classifying symbol versions into added, removed, modified, moved and renamed (pure)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from strata.code.changes import classify, decode_cursor
from strata.errors import ValidationError

T1 = "2025-05-01T00:00:00Z"
T2 = "2025-06-01T00:00:00.000000000Z"  # the same instant may come back in another wire form
T2_OTHER = "2025-06-01T00:00:00Z"
START = datetime(2025, 5, 15, tzinfo=UTC)
END = datetime(2025, 7, 1, tzinfo=UTC)


def row(
    key: str, path: str, qualname: str, *, body: str, shape: str = "s", **times: Any
) -> dict[str, Any]:
    return {
        "key": key,
        "path": path,
        "qualname": qualname,
        "name": qualname.rsplit(".", 1)[-1],
        "kind": "function",
        "qualified_name": qualname,
        "body_hash": body,
        "shape_hash": shape,
        "line": 1,
        "commit": "c2" if times.get("valid_at") == T2 else "c1",
        "valid_at": times.get("valid_at", T1),
        "invalid_at": times.get("invalid_at"),
    }


class TestClassify:
    """A vanished symbol and a new one with the same body at one instant are one move."""

    def test_kinds(self) -> None:
        rows = [
            row("a", "p.py", "edit", body="1", invalid_at=T2_OTHER),
            row("a", "p.py", "edit", body="2", valid_at=T2),
            row("b", "p.py", "old_name", body="3", invalid_at=T2),
            row("c", "p.py", "new_name", body="3", valid_at=T2),
            row("d", "u.py", "slug", body="4", shape="x", invalid_at=T2),
            row("e", "t.py", "slug", body="5", shape="x", valid_at=T2),
            row("f", "p.py", "gone", body="6", shape="y", invalid_at=T2),
            row("g", "p.py", "fresh", body="7", shape="z", valid_at=T2),
            row("h", "p.py", "same", body="8", invalid_at=T2),
            row("h", "p.py", "same", body="8", valid_at=T2),
        ]
        found = {(c.change, c.qualname, c.previous_qualname) for c in classify(rows, START, END)}
        assert found == {
            ("modified", "edit", None),
            ("renamed", "new_name", "old_name"),
            ("moved", "slug", "slug"),
            ("removed", "gone", None),
            ("added", "fresh", None),
        }
        removed = next(c for c in classify(rows, START, END) if c.change == "removed")
        assert removed.commit == "c2"  # the commit of what else happened at that instant

    def test_outside_window_ignored(self) -> None:
        rows = [row("a", "p.py", "old", body="1", valid_at=T1)]
        assert classify(rows, START, END) == []


class TestCursor:
    """A cursor round-trips; a forged one is a validation error."""

    def test_bad(self) -> None:
        with pytest.raises(ValidationError):
            decode_cursor("not-a-cursor")
        assert decode_cursor(None) is None

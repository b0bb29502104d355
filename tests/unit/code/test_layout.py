"""Position is not content: layouts, offsets and their placement back to lines (no database)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from strata.code.languages import parse_file
from strata.code.layout import (
    Layout,
    absolute_lines,
    absolute_site,
    decode_layout,
    encode_layout,
    file_key_of,
    origin_of,
    place_symbol,
    relative_site,
)
from strata.code.model import CallSite, FileExtract, Import, SymbolDef
from strata.code.modules import ModuleIndex
from strata.code.positions import _last_moment, _qualname_of, needs_layout
from strata.code.projection import CodeProjection, Snapshot
from strata.code.resolver import Resolver
from strata.facts import EdgeFact, StateFact
from strata.git import CommitInfo
from strata.graph.reads import FactVersion
from strata.ontology import load_ontology
from strata.settings import PROJECT_ROOT
from strata.temporal import AsOf

V4 = load_ontology(PROJECT_ROOT / "ontology", 4)
V3 = load_ontology(PROJECT_ROOT / "ontology", 3)
T = datetime(2026, 1, 1, tzinfo=UTC)

SOURCE = '''\
import os


def helper(x):
    return x


class Shop:
    """A shop."""

    def total(self, items):
        unknown_thing(items)
        return helper(sum(items))


print(os.sep, helper(1))
'''


def symbol(qualname: str, start: int, end: int) -> SymbolDef:
    return SymbolDef(qualname, qualname.rsplit(".", 1)[-1], "function", start, end, "h")


class TestLayoutEncoding:
    """A File's layout names each symbol's span once, and decodes back."""

    def test_round_trip_keeps_the_first_of_a_repeated_qualname(self) -> None:
        entries = encode_layout([symbol("a", 1, 2), symbol("K.m", 4, 9), symbol("a", 11, 12)])
        assert entries == ["a\t1\t2", "K.m\t4\t9", "a\t11\t12"]
        layout = decode_layout(entries, 3)
        assert layout.spans == {"a": (1, 2), "K.m": (4, 9)}
        assert (layout.base("K.m"), layout.base(None), layout.base("gone")) == (4, 3, None)

    def test_malformed_entries_are_skipped(self) -> None:
        assert decode_layout(["junk", "a\tx\t2", "b\t1\t2"], None).spans == {"b": (1, 2)}
        assert decode_layout(None).spans == {}

    def test_origin_is_the_first_file_level_site(self) -> None:
        extract = FileExtract(
            "m.py",
            "python",
            20,
            calls=(
                CallSite("f", "g", "g", None, 2),
                CallSite(None, "main", "main", None, 18),
            ),
            imports=(Import("os", 5),),
        )
        assert origin_of(extract) == 5
        assert origin_of(FileExtract("m.py", "python", 1)) == 1


class TestOffsets:
    """Sites become offsets from their base and come back as absolute lines."""

    def test_unresolved_site_round_trip(self) -> None:
        assert relative_site("self.store.get@12", 10) == "self.store.get@+2"
        assert absolute_site("self.store.get@+2", 11) == "self.store.get@13"
        assert absolute_site("early@+-1", 11) == "early@10"  # a decorator above the start

    def test_v3_sites_and_unknown_bases_are_left_alone(self) -> None:
        assert absolute_site("get@12", 40) == "get@12"
        assert absolute_site("get@+2", None) == "get@+2"
        assert relative_site("no-line", 3) == "no-line"

    def test_edge_lines(self) -> None:
        assert absolute_lines({"offset": 1, "offsets": [1, 4]}, 10) == (11, (11, 14))
        assert absolute_lines({"offset": 0}, 7) == (7, (7,))
        assert absolute_lines({"line": 5, "lines": [5, 6]}, 99) == (5, (5, 6))  # v3
        assert absolute_lines({}, None) == (0, ())

    def test_place_symbol(self) -> None:
        state = {"kind": "function", "unresolved_calls": ["x.get@+2"]}
        assert needs_layout(state)
        placed = place_symbol(state, (20, 30))
        assert (placed["line_start"], placed["line_end"]) == (20, 30)
        assert placed["unresolved_calls"] == ["x.get@22"]
        assert "line_start" not in state  # the read's state is not changed in place
        old = {"kind": "function", "line_start": 3, "line_end": 4, "unresolved_calls": ["g@3"]}
        assert not needs_layout(old)
        assert place_symbol(old, None) == old
        assert not needs_layout({})
        assert not needs_layout(None)


class TestKeys:
    """A Symbol's File key and qualname come out of its key, escapes included."""

    @pytest.mark.parametrize(("path", "qualname"), [("a/b.py", "K.m"), ("we|ird%.py", "x|y%z")])
    def test_file_key_and_qualname(self, path: str, qualname: str) -> None:
        identity = {"repo": "r|1", "ref": "main", "path": path, "qualname": qualname}
        key = V4.node("Symbol").make_key(identity)
        assert file_key_of(key) == V4.node("File").make_key(identity)
        assert file_key_of(V4.node("File").make_key(identity), "File") == file_key_of(key)
        assert _qualname_of(key) == qualname


class TestLastMoment:
    """A history version's span is read at the last moment it was valid and believed."""

    def test_closed_and_open_versions(self) -> None:
        later = datetime(2026, 3, 1, tzinfo=UTC)
        now = datetime(2026, 6, 1, tzinfo=UTC)
        closed = FactVersion(T, later, T, None, {})
        at = _last_moment(closed, now)
        assert T < at.valid_at < later
        assert at.known_at == now
        assert _last_moment(FactVersion(T, None, T, None, {}), now) == AsOf(now, now)
        future = FactVersion(later, None, T, None, {})
        assert _last_moment(future, T).valid_at == later


def project(ontology: Any, source: str) -> tuple[list[StateFact], list[EdgeFact]]:
    extract = parse_file("shop.py", source.encode())
    resolver = Resolver(ModuleIndex({"shop.py": extract}, []))
    commit = CommitInfo("a" * 40, T, "me", "msg", ())
    projection = CodeProjection(ontology, Snapshot("r", "main", commit, T), resolver.index)
    resolution = resolver.resolve_file("shop.py")
    states = [
        f
        for f in projection.file_states("shop.py", extract, resolution, "blob")
        if isinstance(f, StateFact)
    ]
    edges = [e for e in projection.file_edges("shop.py", extract, resolution, []) if e.props]
    return states, edges


def contents(facts: list[Any], label: str) -> list[Any]:
    return [dict(f.props) for f in facts if getattr(f, "label", getattr(f, "type", "")) == label]


class TestProjection:
    """Under v4 a line inserted at the top changes the File's state only."""

    def test_v4_keeps_symbols_and_edges_when_lines_shift(self) -> None:
        states, edges = project(V4, SOURCE)
        shifted_states, shifted_edges = project(V4, "# header\n" + SOURCE)
        assert contents(states, "Symbol") == contents(shifted_states, "Symbol")
        assert [dict(e.props or {}) for e in edges] == [dict(e.props or {}) for e in shifted_edges]
        (file_state,) = contents(states, "File")
        (shifted_file,) = contents(shifted_states, "File")
        assert file_state["layout"] != shifted_file["layout"]
        assert decode_layout(shifted_file["layout"]).spans["Shop.total"] == (12, 14)
        assert (file_state["layout_origin"], shifted_file["layout_origin"]) == (1, 2)
        total = next(
            p for p in contents(states, "Symbol") if p["qualified_name"] == "shop.Shop.total"
        )
        assert total["unresolved_calls"] == ["unknown_thing@+1", "sum@+2"]
        calls = [e.props for e in edges if e.type == "CALLS" and e.src.key.endswith("Shop.total")]
        assert [c["offset"] for c in calls if c is not None] == [2]

    def test_v3_writes_absolute_positions(self) -> None:
        states, edges = project(V3, SOURCE)
        shifted, _ = project(V3, "# header\n" + SOURCE)
        assert contents(states, "Symbol") != contents(shifted, "Symbol")
        assert all("line_start" in p for p in contents(states, "Symbol"))
        assert all("layout" not in p for p in contents(states, "File"))
        assert all("line" in (e.props or {}) for e in edges if e.type in ("CALLS", "IMPORTS"))

    def test_layout_places_what_the_projection_wrote(self) -> None:
        states, _ = project(V4, "\n\n" + SOURCE)
        (file_state,) = contents(states, "File")
        layout = decode_layout(file_state["layout"], file_state["layout_origin"])
        total = next(
            p for p in contents(states, "Symbol") if p["qualified_name"] == "shop.Shop.total"
        )
        placed = place_symbol(total, layout.span("Shop.total"))
        assert (placed["line_start"], placed["unresolved_calls"][0]) == (13, "unknown_thing@14")
        assert isinstance(layout, Layout)

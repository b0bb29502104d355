"""The pure half of "why is it empty": id shapes, the history bound, cut lists."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from strata.errors import ValidationError
from strata.graph.absence import Span, before_history, check_key, cut_lists
from strata.ontology import Ontology, load_ontology
from strata.settings import Settings
from strata.temporal import AsOf

FIRST = datetime(2025, 5, 1, tzinfo=UTC)
RECORDED = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def ontology() -> Ontology:
    return load_ontology(Settings().ontology_dir)


def span() -> Span:
    return Span(first_valid=FIRST, first_known=RECORDED, versions=1, since=FIRST, until=None)


class TestCheckKey:
    """A key is refused by its shape alone, before any read."""

    def test_symbol_and_file_keys(self, ontology: Ontology) -> None:
        assert check_key(ontology, ("Symbol", "File"), "r|main|a.py|f") == ("r", "Symbol")
        assert check_key(ontology, ("Symbol", "File"), "r|main|a.py") == ("r", "File")
        assert check_key(ontology, "Symbol", "a%7Cb|main|a.py|f") == ("a|b", "Symbol")

    @pytest.mark.parametrize("bad", ["f", "r|main", "|main|a.py|f", "r|m|p|q|x"])
    def test_malformed(self, ontology: Ontology, bad: str) -> None:
        with pytest.raises(ValidationError, match="repo\\|ref\\|path\\|qualname"):
            check_key(ontology, "Symbol", bad)


class TestBeforeHistory:
    """A moment before the first indexed commit (or the first record) is named, with that time."""

    def test_valid_axis(self) -> None:
        early = before_history("r", AsOf.at(datetime(2025, 1, 1, tzinfo=UTC)), span())
        assert early is not None
        assert early.code == "before_history"
        assert early.details == {"first_indexed_at": FIRST.isoformat(), "axis": "valid"}

    def test_known_axis(self) -> None:
        early = before_history("r", AsOf.at(FIRST, datetime(2025, 12, 1, tzinfo=UTC)), span())
        assert early is not None
        assert early.details["axis"] == "known"

    def test_inside_history(self) -> None:
        assert before_history("r", AsOf.at(), span()) is None
        assert before_history("r", AsOf.at(FIRST, RECORDED), span()) is None


class TestCutLists:
    """Lists read one past the page say whether they were cut; a capped walk always is."""

    def test_cut(self) -> None:
        lists = {"callers": [1, 2, 3], "entrypoints": [1], "tests": [1, 2, 3]}
        assert cut_lists(lists, 2, total=3, cap=200) == ["callers", "tests"]
        assert cut_lists(lists, 3, total=3, cap=200) == []

    def test_capped_walk(self) -> None:
        assert cut_lists({"callers": [1], "tests": []}, 5, total=200, cap=200) == ["callers"]

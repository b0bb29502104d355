"""Body words, the file rollup, test demotion and query stop words (no database)."""

from __future__ import annotations

import pytest

from strata.search.bodies import bodies, body_words
from strata.search.docs import document
from strata.search.fusion import Fused, demoted
from strata.search.rollup import file_rollup
from strata.search.service import in_test_folder
from strata.search.text import (
    coverage_queries,
    file_tag,
    lucene_query,
    repo_tag,
    search_terms,
)

SOURCE = b"""def first():
    return parseHTTPHeader(raw_value)


def second():
    # flush the stream buffer
    return "closed pipe"
"""


class TestBodyWords:
    """A document's body words are its source's identifiers and words, distinct, bounded."""

    def test_identifiers_comments_and_strings_are_split(self) -> None:
        words = body_words(SOURCE.decode(), 100).split()
        assert {"parsehttpheader", "parse", "http", "header", "raw_value", "raw"} <= set(words)
        assert {"flush", "stream", "buffer", "closed", "pipe"} <= set(words)
        assert len(words) == len(set(words))

    def test_bounded(self) -> None:
        assert len(body_words(" ".join(f"w{i}x" for i in range(50)), 10).split()) == 10

    def test_symbol_reads_its_own_lines_and_file_the_whole_blob(self) -> None:
        rows = [
            {"label": "Symbol", "blob": "b1", "state": {"line_start": 1, "line_end": 2}},
            {"label": "Symbol", "blob": "b1", "state": {"line_start": 5, "line_end": 7}},
            {"label": "File", "blob": "b1", "state": {}},
            {"label": "Symbol", "blob": "gone", "state": {"line_start": 1, "line_end": 2}},
        ]
        out = bodies(rows, {"b1": SOURCE})
        assert "header" in out[0].split()
        assert "pipe" not in out[0].split()
        assert "pipe" in out[1].split()
        assert "header" not in out[1].split()
        assert {"header", "pipe"} <= set(out[2].split())
        assert 3 not in out  # a blob not on this machine: no body words, no error

    def test_symbols_of_one_file_version_share_its_layout(self) -> None:
        # ontology v4: spans live in the File version's layout, sent with every symbol
        layout = ["first\t1\t2", "second\t5\t7"]
        rows = [
            {"label": "Symbol", "blob": "b1", "state": {}, "node": {"qualname": q}}
            for q in ("first", "second", "missing")
        ]
        for row in rows:
            row["file_layout"] = layout
        out = bodies(rows, {"b1": SOURCE})
        assert "header" in out[0].split()
        assert "pipe" not in out[0].split()
        assert "pipe" in out[1].split()
        assert "header" not in out[1].split()
        assert 2 not in out  # a qualname the layout does not hold: no lines, no error

    def test_document_puts_body_after_prose_and_marks_tests(self) -> None:
        row = document(
            "Symbol",
            {"key": "r|main|t.py|f", "repo": "r", "name": "f", "path": "t.py"},
            {"kind": "function", "docstring": "Does it."},
            "h",
            "stream pipe",
            test=True,
        )
        assert row["props"]["text"].endswith("stream pipe")
        assert row["props"]["test"] is True
        assert "stream" not in row["props"]["embed_text"]  # vectors keep to names and prose


class TestCoverage:
    """Files by how many query words they hold: one File-only query per word."""

    def test_one_query_per_distinct_word_of_three_letters_or_more(self) -> None:
        queries = coverage_queries(["echo", "via", "io", "echo", "pager"], "r")
        assert queries == [
            f"+rtag:{file_tag('r')} +(names:{w} OR text:{w})" for w in ("echo", "via", "pager")
        ]

    def test_lucene_syntax_in_a_word_is_escaped(self) -> None:
        (query,) = coverage_queries(["a+b:c"], "r")
        assert r"a\+b\:c" in query
        assert coverage_queries(["AND", "or"], "r")[0].endswith("(names:and OR text:and)")

    def test_only_file_documents_carry_the_file_tag(self) -> None:
        node = {"key": "r|main|a.py", "repo": "r", "path": "a.py"}
        file_doc = document("File", node, {}, "h")["props"]["rtag"].split()
        symbol_doc = document("Symbol", node | {"name": "f"}, {"kind": "function"}, "h")
        assert file_doc == [repo_tag("r"), file_tag("r")]
        assert symbol_doc["props"]["rtag"].split() == [repo_tag("r")]

    def test_rollup_fuses_coverage_by_rank(self) -> None:
        fused = [Fused("a1", 0.05), Fused("a2", 0.04), Fused("b", 0.01)]
        paths = {"a1": "a.py", "a2": "a.py", "b": "b.py", "c": "c.py"}
        alone = file_rollup(fused, paths)
        assert [f.path for f in alone] == ["a.py", "b.py"]
        # b.py and c.py hold more of the query's words than a.py: b.py, second in the
        # rollup and first by coverage, leads; c.py, found by coverage only, is kept.
        files = file_rollup(fused, paths, coverage=[("b", 3), ("c", 2), ("a1", 1), ("x", 5)])
        assert [f.path for f in files] == ["b.py", "a.py", "c.py"]
        assert files[0].score == pytest.approx(1 / 62 + 1 / 61, abs=1e-6)
        assert files[2].keys == ("c",)

    def test_files_holding_as_many_words_share_a_coverage_rank(self) -> None:
        paths = {"a": "a.py", "b": "b.py", "c": "c.py"}
        files = file_rollup([Fused("b", 0.02)], paths, coverage=[("a", 2), ("b", 2), ("c", 1)])
        assert [f.path for f in files] == ["b.py", "a.py", "c.py"]
        assert files[1].score == pytest.approx(1 / 61, abs=1e-6)  # a: rank 1, as b
        assert files[2].score == pytest.approx(1 / 63, abs=1e-6)  # c: rank 3


class TestRanking:
    """Files roll up their symbols; tests count less; queries lose their stop words."""

    def test_rollup_decays_and_ignores_unknown_paths(self) -> None:
        fused = [Fused("a1", 0.03), Fused("b1", 0.025), Fused("a2", 0.02), Fused("x", 0.05)]
        files = file_rollup(fused, {"a1": "a.py", "a2": "a.py", "b1": "b.py"}, decay=0.5)
        assert [f.path for f in files] == ["a.py", "b.py"]
        assert files[0].score == pytest.approx(0.03 + 0.5 * 0.02)
        assert files[0].keys == ("a1", "a2")

    def test_demoted_re_sorts(self) -> None:
        ranked = demoted([Fused("t", 0.03), Fused("s", 0.02)], {"t"}, 0.5)
        assert [f.key for f in ranked] == ["s", "t"]
        assert ranked[1].score == pytest.approx(0.015)

    def test_stop_words_leave_unless_nothing_is_left(self) -> None:
        assert search_terms("fix the echo when it doesn't flush") == ["echo", "flush"]
        assert search_terms("the of") == ["the", "of"]

    def test_prefixes_can_be_left_out(self) -> None:
        assert "names:echo*^2" in lucene_query(["echo"], "r")
        assert "*" not in lucene_query(["echo", "flush", "stream"], "r", prefixes=False)


class TestTestFolders:
    """What counts as test code for ranking, beyond the files the code graph calls tests."""

    @pytest.mark.parametrize(
        ("path", "expected"),
        [
            ("tests/typing/typing_options.py", True),
            ("lib/matplotlib/tests/test_axes.py", True),
            ("testing/python/collect.py", True),
            ("src/click/testing.py", False),  # a library module named testing
            ("django/test/testcases.py", False),  # Django's test framework is library code
            ("tests.py", False),
            (None, False),
        ],
    )
    def test_in_test_folder(self, path: str | None, expected: bool) -> None:
        assert in_test_folder(path) is expected

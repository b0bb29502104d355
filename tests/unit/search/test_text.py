"""Identifier words, query checks, Lucene escaping and rank fusion (pure)."""

from __future__ import annotations

import pytest

from strata.errors import ValidationError
from strata.search.docs import document
from strata.search.fusion import Ranked, rrf
from strata.search.service import check_kinds, check_layers
from strata.search.text import (
    MAX_MENTIONS,
    check_first,
    check_query,
    doc_text,
    escape_lucene,
    identifier_words,
    lucene_query,
    mentions,
    query_terms,
    repo_tag,
)


class TestIdentifierWords:
    """Identifiers are indexed whole and split at case and underscore boundaries."""

    @pytest.mark.parametrize(
        ("text", "words"),
        [
            ("planSet", ["planset", "plan", "set"]),
            ("plan_set", ["plan_set", "plan", "set"]),
            ("parseHTTPRequest2", ["parsehttprequest2", "parse", "http", "request", "2"]),
            ("strata.temporal.plan_set", ["strata", "temporal", "plan_set", "plan", "set"]),
            ("src/strata/code/reads.py", ["src", "strata", "code", "reads", "py"]),
            ("plain words", ["plain", "words"]),
        ],
    )
    def test_words(self, text: str, words: list[str]) -> None:
        assert identifier_words(text) == words

    def test_doc_text_deduplicates_in_order(self) -> None:
        assert doc_text(["CodeReads", "code reads", None, ""]) == "codereads code reads"


class TestQueryChecks:
    """Empty, huge, binary and non-text queries are refused before any read."""

    @pytest.mark.parametrize("bad", ["", "  \n", "a" * 10_001, "a\x00b", "\x1b[2J", b"x", 3])
    def test_refused(self, bad: object) -> None:
        with pytest.raises(ValidationError):
            check_query(bad)

    def test_multibyte_counts_bytes(self) -> None:
        with pytest.raises(ValidationError):
            check_query("é" * 5001)
        assert check_query(" é ") == "é"

    @pytest.mark.parametrize("bad", [0, 51, -1, True, "10", 2.5])
    def test_first(self, bad: object) -> None:
        with pytest.raises(ValidationError):
            check_first(bad)

    def test_layers_and_kinds(self) -> None:
        assert check_layers(["knowledge"]) == ("Requirement", "Decision")
        assert check_kinds(["method", "class"]) == ["class", "method"]
        for bad_layers in (["code", "nope"], []):
            with pytest.raises(ValidationError):
                check_layers(bad_layers)
        with pytest.raises(ValidationError):
            check_kinds(["widget"])


class TestLucene:
    """User text never reaches Lucene as syntax."""

    @pytest.mark.parametrize(
        ("term", "escaped"),
        [
            ("a+b", "a\\+b"),
            ('"x"', '\\"x\\"'),
            ("a:b", "a\\:b"),
            ("AND", "and"),
            ("x*", "x\\*"),
            ("a/b", "a\\/b"),
            ("a&&b||c", "a\\&\\&b\\|\\|c"),
            ("\\", "\\\\"),
        ],
    )
    def test_escape(self, term: str, escaped: str) -> None:
        assert escape_lucene(term) == escaped

    def test_operators_become_words(self) -> None:
        terms = query_terms('title:"x" AND (y OR z*)')
        assert terms == ["title", "x", "and", "y", "or", "z"]
        query = lucene_query(terms, "shop")
        assert query.startswith(f"+rtag:{repo_tag('shop')} +(")
        assert " AND " not in query.replace(" OR ", " ")
        assert "names:title^4" in query
        assert "names:title*^2" in query

    def test_terms_are_capped(self) -> None:
        assert len(query_terms(" ".join(f"w{i}" for i in range(100)))) == 32


class TestFusion:
    """Reciprocal rank fusion rewards agreement and keeps every retriever's rank."""

    def test_agreement_beats_one_first_place(self) -> None:
        fused = rrf(
            {
                "fulltext": [Ranked("a", 9.0), Ranked("b", 5.0)],
                "vector": [Ranked("c", 0.9), Ranked("b", 0.8)],
            }
        )
        assert [f.key for f in fused] == ["b", "a", "c"]
        assert fused[0].ranks == {"fulltext": (2, 5.0, None), "vector": (2, 0.8, None)}
        assert fused[0].score == pytest.approx(2 / 62)

    def test_weights_and_duplicates(self) -> None:
        fused = rrf(
            {"graph": [Ranked("x", 1.0), Ranked("x", 0.5)], "fulltext": [Ranked("y", 1.0)]},
            weights={"graph": 0.5},
        )
        assert [f.key for f in fused] == ["y", "x"]
        assert fused[1].score == pytest.approx(0.5 / 61)

    def test_shared_ranks_for_equal_counts(self) -> None:
        counts = [Ranked("a", 3.0), Ranked("b", 2.0), Ranked("c", 2.0), Ranked("d", 1.0)]
        shared = {
            f.key: f.ranks["coverage"][0]
            for f in rrf({"coverage": counts}, shared=frozenset({"coverage"}))
        }
        assert shared == {"a": 1, "b": 2, "c": 2, "d": 4}
        plain = {f.key: f.ranks["coverage"][0] for f in rrf({"coverage": counts})}
        assert plain == {"a": 1, "b": 2, "c": 3, "d": 4}


class TestDocument:
    """A search document carries identifier words, prose and the content hash."""

    def test_symbol(self) -> None:
        row = document(
            "Symbol",
            {
                "key": "r|main|a.py|CartStore.addItem",
                "repo": "r",
                "ref": "main",
                "path": "web/a.ts",
                "name": "addItem",
                "qualname": "CartStore.addItem",
            },
            {
                "kind": "method",
                "qualified_name": "web/a.ts:CartStore.addItem",
                "docstring": "Adds a line item.",
            },
            "h1",
        )
        assert row["key"] == "r|main|a.py|CartStore.addItem#h1"
        props = row["props"]
        assert props["kind"] == "method"
        assert {"additem", "add", "item", "cartstore", "cart", "store", "web"} <= set(
            props["names"].split()
        )
        assert "line" in props["text"].split()
        assert "Adds a line item." in props["embed_text"]


class TestMentions:
    """What a query names as code: exact identifiers and file paths, never plain words."""

    @pytest.mark.parametrize(
        ("query", "names", "files"),
        [
            ("Update testing.py", (), ("testing.py",)),
            ("Added `type` parameter to `attrs.field()`", ("type", "field"), ()),
            ("Improve echo_via_pager behaviour", ("echo_via_pager",), ()),
            ("Add support for __attrs_init_subclass__", ("__attrs_init_subclass__",), ()),
            (
                "rebuildProxies drops auth in src/requests/sessions.py",
                ("rebuildproxies",),
                ("src/requests/sessions.py",),
            ),
            ("raise HTTPProxyAuth twice", ("httpproxyauth",), ()),
            ("call main() twice", ("main",), ()),
            ("fix the parser", (), ()),
            ("drop support for python 3.7", (), ()),
            ("Fix v1.2 regression, e.g. in the docs", (), ()),
            ("Python and Django", (), ()),
        ],
    )
    def test_mentions(self, query: str, names: tuple[str, ...], files: tuple[str, ...]) -> None:
        found = mentions(query)
        assert found.names == names
        assert found.files == files

    def test_bounded(self) -> None:
        found = mentions(" ".join(f"name_{i} f{i}.py" for i in range(40)))
        assert len(found.names) == MAX_MENTIONS
        assert len(found.files) == MAX_MENTIONS

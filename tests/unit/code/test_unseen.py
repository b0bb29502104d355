"""The full-text query for unresolved sites: a phrase of letter runs per name."""

from __future__ import annotations

import string

from strata.code.unseen import MAX_INDEXED_NAMES, called_name, lucene_query


def word(i: int) -> str:
    letters = string.ascii_lowercase
    out = ""
    while True:
        i, r = divmod(i, 26)
        out = letters[r] + out
        if i == 0:
            return out


def test_each_name_is_a_phrase_of_its_letter_runs() -> None:
    assert lucene_query(["save", "get_object_or_404"]) == '"get object or" OR "save"'
    assert lucene_query(["Save", "save"]) == '"save"'
    assert lucene_query(["__init__"]) == '"init"'


def test_names_the_index_cannot_search() -> None:
    assert lucene_query([]) is None
    assert lucene_query(["_"]) is None
    assert lucene_query(["save", "__"]) is None
    assert lucene_query([word(i) for i in range(MAX_INDEXED_NAMES)]) is not None
    assert lucene_query([word(i) for i in range(MAX_INDEXED_NAMES + 1)]) is None


def test_called_name_splits_on_dots_and_colons() -> None:
    assert called_name("self._store.values") == "values"
    assert called_name("a::b") == "b"
    assert called_name("plain") == "plain"

"""User text becomes a Lucene query that searches literally (no services)."""

from __future__ import annotations

import pytest

from strata.errors import ValidationError
from strata.graph import lucene


class TestTerms:
    """Special characters are escaped, operator words quoted, everything else kept."""

    def test_plain_word_unchanged(self) -> None:
        assert lucene.term("broker") == "broker"

    @pytest.mark.parametrize("word", ["AND", "OR", "NOT"])
    def test_operators_are_quoted(self, word: str) -> None:
        assert lucene.term(word) == f'"{word}"'

    def test_lower_case_operators_are_plain_words(self) -> None:
        assert lucene.term("and") == "and"

    @pytest.mark.parametrize("char", list('+-&|!(){}[]^"~*?:\\/'))
    def test_every_special_character_is_escaped(self, char: str) -> None:
        assert lucene.escape(f"a{char}b") == f"a\\{char}b"

    def test_text_with_spaces_is_one_phrase(self) -> None:
        assert lucene.term('say "hi" \\ now') == '"say \\"hi\\" \\\\ now"'

    def test_any_of(self) -> None:
        assert lucene.any_of(["a", "AND", "b:c"]) == 'a OR "AND" OR b\\:c'

    def test_empty_is_refused(self) -> None:
        with pytest.raises(ValidationError):
            lucene.term("")
        with pytest.raises(ValidationError):
            lucene.phrase("")

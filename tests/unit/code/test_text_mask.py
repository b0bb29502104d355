"""``mask_word`` (the shape hash's masking) against the regular expression it replaces."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from strata.code.languages._text import mask_word, shape_hash

# Word and non-word characters, a multi-byte one among them: every boundary case.
ALPHABET = st.sampled_from([b"a", b"b", b"_", b"1", b" ", b".", b"(", b"+", b"\xc3", b"\xa9"])


def regex_mask(text: bytes, word: bytes) -> bytes:
    return re.sub(rb"\b" + re.escape(word) + rb"\b", b"\x00", text)


@given(st.lists(ALPHABET, max_size=40).map(b"".join), st.lists(ALPHABET, max_size=4).map(b"".join))
def test_mask_word_agrees_with_the_word_boundary_regex(text: bytes, word: bytes) -> None:
    expected = regex_mask(text, word) if word else text
    assert mask_word(text, word) == expected


def test_masks_whole_words_only() -> None:
    source = b"def save(self):\n    return save_model(self.save) + resave()\n"
    assert mask_word(source, b"save") == (
        b"def \x00(self):\n    return save_model(self.\x00) + resave()\n"
    )


def test_a_renamed_function_keeps_its_shape() -> None:
    old = b"def fetch(n):\n    return fetch(n - 1) if n else 0\n"
    new = b"def load(n):\n    return load(n - 1) if n else 0\n"
    assert shape_hash(old, "fetch") == shape_hash(new, "load")
    assert shape_hash(old, "fetch") != shape_hash(new, "fetch")

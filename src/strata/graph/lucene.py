"""User text made safe for Neo4j full-text queries (Lucene classic query syntax).

``db.index.fulltext.queryNodes/queryRelationships`` parse their query string
with Lucene's query parser, so text a user typed must not reach them raw: a
lone ``AND`` or an unbalanced ``(`` is a parser error (a 500 carrying Lucene's
message), and ``*`` or ``field:`` change what is searched. These helpers make
any text search literally.
"""

from __future__ import annotations

import re

from strata.errors import ValidationError

_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
OPERATORS = frozenset({"AND", "OR", "NOT"})
"""Words the parser reads as operators (upper case only, as in Lucene's default)."""


def escape(text: str) -> str:
    """``text`` with every Lucene special character backslash-escaped."""
    return _SPECIAL.sub(r"\\\1", text)


def phrase(text: str) -> str:
    """``text`` as one quoted phrase: inside quotes only ``"`` and ``\\`` are special."""
    if not text:
        raise ValidationError("a search term must not be empty")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def term(word: str) -> str:
    """One word as a literal term: escaped, or quoted when it is an operator or has spaces."""
    if not word:
        raise ValidationError("a search term must not be empty")
    if word in OPERATORS or any(c.isspace() for c in word):
        return phrase(word)
    return escape(word)


def any_of(words: list[str]) -> str:
    """A query matching any of ``words``, each searched literally."""
    return " OR ".join(term(w) for w in words)

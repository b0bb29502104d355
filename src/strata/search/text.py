"""Pure text handling for search: identifier splitting, query checks, Lucene escaping.

Neo4j's fulltext analyzers split on whitespace and punctuation but keep
``plan_set`` and ``strata.temporal.plan_set`` whole and never split
``planSet``; so the words of an identifier are spelled out here, once, on the
document side (:func:`identifier_words`) and on the query side (:func:`query_terms`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from strata.errors import ValidationError
from strata.graph import lucene

MAX_QUERY_BYTES = 10_000
MAX_TERMS = 32
MAX_FIRST = 50
EMBED_CHARS = 240  # the encoder costs ~6 ms at 200 characters, ~15 at 400

WORD = re.compile(r"[A-Za-z0-9_]+")
# camelCase / PascalCase / ACRONYMWords / digits: "parseHTTPRequest2" -> parse, HTTP, Request, 2
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Operators in search terms (strata.graph.lucene escapes the syntax characters).
# Lowered rather than quoted: a search term may take a `*` suffix, which a phrase cannot.
_LUCENE_WORDS = lucene.OPERATORS | {"TO"}


def identifier_words(text: str) -> list[str]:
    """Lower-cased words of identifiers and prose, whole and split.

    ``CodeReads.find_symbols`` gives ``codereads code reads find_symbols find
    symbols``: the whole identifier (exact matches rank first) and its parts.
    """
    out: list[str] = []
    for word in WORD.findall(text):
        out.extend(word_parts(word))
    return out


@functools.lru_cache(maxsize=1 << 16)
def word_parts(word: str) -> tuple[str, ...]:
    """One identifier, lower-cased whole, then its parts if it has more than one.

    Cached: a code base repeats its identifiers, and a push's documents split the
    bodies of 45k symbols (Django) — split once each, not once per use."""
    lower = word.lower()
    parts = [p.lower() for chunk in word.split("_") for p in _HUMP.findall(chunk)]
    return (lower, *parts) if len(parts) > 1 else (lower,)


def doc_text(values: Iterable[str | None]) -> str:
    """The indexed text of some fields: their words, de-duplicated in order."""
    seen: dict[str, None] = {}
    for value in values:
        if value:
            for word in identifier_words(value):
                seen.setdefault(word, None)
    return " ".join(seen)


def check_query(query: object) -> str:
    """The query, stripped; a :class:`ValidationError` for empty, huge or binary input."""
    if isinstance(query, bytes):
        raise ValidationError("the search query must be text, not bytes", field="query")
    if not isinstance(query, str):
        raise ValidationError("the search query must be a string", field="query")
    if len(query.encode("utf-8", errors="surrogatepass")) > MAX_QUERY_BYTES:
        raise ValidationError(
            f"the search query is longer than {MAX_QUERY_BYTES} bytes",
            field="query",
            hint="search for a few words or an identifier",
        )
    if _CONTROL.search(query) or any(0xD800 <= ord(c) <= 0xDFFF for c in query):
        raise ValidationError(
            "the search query contains binary or control characters", field="query"
        )
    stripped = query.strip()
    if not stripped:
        raise ValidationError("the search query is empty", field="query")
    return stripped


def query_terms(query: str) -> list[str]:
    """The distinct words a query searches for (whole identifiers and their parts)."""
    terms: dict[str, None] = {}
    for word in identifier_words(query):
        terms.setdefault(word, None)
    return list(terms)[:MAX_TERMS]


# Words a question or a commit subject is made of that name no code: searched for,
# they only add noise (the analyzer drops English stop words from text, but not from
# the prefix clauses nor the identifier words of `names`).
STOP_WORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "could",
        "do",
        "does",
        "doesn",
        "don",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "not",
        "of",
        "on",
        "or",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "add",
        "added",
        "adds",
        "allow",
        "allows",
        "fix",
        "fixed",
        "fixes",
        "make",
        "makes",
        "made",
        "use",
        "used",
        "uses",
        "using",
        "support",
        "supports",
        "change",
        "changes",
        "changed",
        "handle",
        "handles",
        "update",
        "updates",
    )
)
PREFIX_TERMS = 2  # a query of at most this many words may be a partial identifier


def search_terms(query: str) -> list[str]:
    """The query's terms without stop words (all of them if nothing else is left)."""
    terms = query_terms(query)
    kept = [t for t in terms if t not in STOP_WORDS and len(t) > 1]
    return kept or terms


def escape_lucene(term: str) -> str:
    """A term safe to place in a Lucene query: special characters and operators escaped."""
    escaped = lucene.escape(term)
    if escaped in _LUCENE_WORDS:
        return escaped.lower()
    return escaped


def repo_tag(repo: str) -> str:
    """One Lucene token naming a repository (its name would be split by the analyzer)."""
    return "r" + hashlib.blake2b(repo.encode(), digest_size=8).hexdigest()


def file_tag(repo: str) -> str:
    """The token a repository's File documents carry beside :func:`repo_tag`, so a
    query can ask the index for files only (a symbol's document never has it)."""
    return repo_tag(repo) + "f"


# A word of fewer letters names too little to count towards a file's coverage.
COVERAGE_MIN_LENGTH = 3


def coverage_queries(terms: Iterable[str], repo: str) -> list[str]:
    """One Lucene query per distinct term: that word in a File document of ``repo``.

    A file is then ranked by how many of the query's words it holds at all (its
    coverage), the coordination level matching of early retrieval systems: a
    change touches the file whose text holds most of what its message names, which
    the summed scores of one OR query rank below a file that repeats a single word.
    """
    tag = file_tag(repo)
    out: dict[str, None] = {}
    for term in terms:
        if len(term) >= COVERAGE_MIN_LENGTH:
            safe = escape_lucene(term)
            out.setdefault(f"+rtag:{tag} +(names:{safe} OR text:{safe})", None)
    return list(out)


def lucene_query(terms: Iterable[str], repo: str, *, prefixes: bool = True) -> str:
    """A Lucene query over the ``names`` (boosted) and ``text`` fields of one repository.

    The repository is a required clause, so the index's top hits are this
    repository's, however many others share the index. Terms are ORed; those of
    three letters or more also match as prefixes (``reindex*``) when ``prefixes``,
    so a partial identifier still finds its symbol (in a sentence, prefixes of its
    words match mostly noise).
    """
    clauses: list[str] = []
    for term in terms:
        safe = escape_lucene(term)
        clauses.append(f"names:{safe}^4")
        clauses.append(f"text:{safe}")
        if prefixes and len(term) >= 3:
            clauses.append(f"names:{safe}*^2")
    return f"+rtag:{repo_tag(repo)} +({' OR '.join(clauses)})"


def embedding_text(values: Iterable[str | None]) -> str:
    """The text an embedding summarises: identifiers spelled as words, prose as written."""
    parts: list[str] = []
    for value in values:
        if not value:
            continue
        parts.append(" ".join(identifier_words(value)) if _looks_like_identifier(value) else value)
    # The encoder's cost grows with the text: the name, signature and the first
    # sentences of the docstring carry what a search needs.
    return " ".join(parts)[:EMBED_CHARS]


def _looks_like_identifier(value: str) -> bool:
    return " " not in value.strip()


# Source files a query may name ("the bug in utils.py"): looked up by path.
_SUFFIX_LIST = "py pyi js jsx mjs cjs ts tsx go rs java kt kts cs php rb c h cc cpp hpp swift scala"
SOURCE_SUFFIXES = frozenset(_SUFFIX_LIST.split(" "))
MAX_MENTIONS = 8
_TOKEN = re.compile(r"`([^`\n]{1,200})`|([A-Za-z0-9_][A-Za-z0-9_./-]*[A-Za-z0-9_])(\(\))?")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


@dataclass(frozen=True, slots=True)
class Mentions:
    """What a query names exactly: symbol names (lower-cased, the last part of a dotted
    name) and source file paths (lower-cased, as written)."""

    names: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


def mentions(query: str) -> Mentions:
    """The identifiers and file names a query spells out as code would.

    An identifier counts when nothing else would name it: in backticks, called
    (``f()``), dotted (``attrs.field``), or written as code (``max_retries``,
    ``rebuildProxies``, ``HTTPProxyAuth``); a plain word never does, so "fix the parser" names
    nothing. A file counts by its suffix (``testing.py``, ``src/app/main.go``).
    """
    names: dict[str, None] = {}
    files: dict[str, None] = {}
    for match in _TOKEN.finditer(query):
        quoted, word, called = match.group(1), match.group(2), match.group(3)
        token = (quoted or word or "").strip().rstrip("()")
        stem, dot, suffix = token.rpartition(".")
        if dot and stem and suffix.lower() in SOURCE_SUFFIXES and "/" not in suffix:
            files.setdefault(token.lower().lstrip("./"), None)
        elif quoted is not None or called or _codelike(token):
            last = token.rsplit(".", 1)[-1]
            if _IDENTIFIER_ONLY.fullmatch(last) and len(last) > 1:
                names.setdefault(last.lower(), None)
    return Mentions(tuple(names)[:MAX_MENTIONS], tuple(files)[:MAX_MENTIONS])


_IDENTIFIER_ONLY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _codelike(token: str) -> bool:
    """``snake_case``, ``camelCase``, ``dotted.name``: spelled as code, not prose."""
    if _DOTTED.fullmatch(token):
        return True
    if not _IDENTIFIER_ONLY.fullmatch(token):
        return False
    inner = token.strip("_")
    return "_" in inner or any(a.islower() and b.isupper() for a, b in itertools.pairwise(inner))


def check_first(first: object) -> int:
    """``first`` within 1..MAX_FIRST, or a :class:`ValidationError`."""
    if isinstance(first, bool) or not isinstance(first, int) or not 1 <= first <= MAX_FIRST:
        raise ValidationError(
            f"first must be an integer from 1 to {MAX_FIRST}", field="first", value=repr(first)[:40]
        )
    return first

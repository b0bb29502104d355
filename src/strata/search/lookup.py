"""The cheap case of search: case-insensitive symbol lookup by name part or name suffix.

``name_contains`` matches anywhere in the symbol's own name, ``qualified_name_suffix``
at the end of its qualified name (``payments.charge`` finds
``billing.payments.charge``), both ignoring case, both as of a moment.
"""

from __future__ import annotations

import re

from strata.code.positions import Positions
from strata.code.reads import MAX_FIRST, REPO_SYMBOLS, SymbolView
from strata.errors import ValidationError
from strata.graph.gateway import Gateway
from strata.temporal import AsOf, as_of_predicate, fact_projection

MAX_NEEDLE = 200

# A name part or suffix cannot seek an index: the symbols are read and tested. Given a
# repository, only its own are read (REPO_SYMBOLS: 42k symbols of Django instead of
# every symbol of the graph); without one, every symbol is.
_FUZZY_REST = f"""
  AND ($repos IS NULL OR s.repo IN $repos) AND ($repo IS NULL OR s.repo = $repo)
  AND ($ref IS NULL OR s.ref = $ref) AND s.key > $after
  AND ($needle IS NULL OR toLower(s.name) CONTAINS $needle)
  AND ($tail IS NULL OR toLower(s.name) CONTAINS $tail)
  AND ($name IS NULL OR s.name = $name) AND ($path IS NULL OR s.path STARTS WITH $path)
MATCH (s)-[st:STATE]->(s)
WHERE {as_of_predicate("st")} AND ($kind IS NULL OR st.kind = $kind)
  AND ($suffix IS NULL OR toLower(st.qualified_name) ENDS WITH $suffix)
  AND ($qualified_name IS NULL OR st.qualified_name = $qualified_name)
RETURN properties(s) AS node, {fact_projection("st")} AS state
ORDER BY s.key
LIMIT $first
"""
FUZZY_IN_REPO = REPO_SYMBOLS + _FUZZY_REST
FUZZY_SYMBOLS = "\nMATCH (s:Symbol)\nWHERE true" + _FUZZY_REST


# A qualified name ends with its symbol's name (and an overload's `#2`), so the last
# run of identifier characters of a suffix lies inside the name: testing the name
# first leaves only a few symbols' states to read (Django's 42k symbols: 440-780 ms
# before, 140-210 ms on a loaded machine).
_OVERLOAD = re.compile(r"#\d+$")
_TAIL = re.compile(r"[a-z0-9_]+$")


def name_tail(suffix: str | None) -> str | None:
    """The part of a (lower-cased) qualified-name suffix every matching name contains."""
    if suffix is None:
        return None
    found = _TAIL.search(_OVERLOAD.sub("", suffix))
    return found.group(0) if found else None


def _needle(name: str, value: str | None) -> str | None:
    if value is None:
        return None
    stripped = value.strip().lower()
    if not stripped or len(stripped) > MAX_NEEDLE or "\x00" in stripped:
        raise ValidationError(f"`{name}` must be 1 to {MAX_NEEDLE} characters of text", field=name)
    return stripped


def fuzzy_symbols(
    gateway: Gateway,
    as_of: AsOf,
    *,
    name_contains: str | None = None,
    qualified_name_suffix: str | None = None,
    name: str | None = None,
    qualified_name: str | None = None,
    path: str | None = None,
    repo: str | None = None,
    ref: str | None = None,
    kind: str | None = None,
    first: int = 20,
    after: str = "",
    repos: list[str] | None = None,
    timeout: float | None = None,
) -> list[SymbolView]:
    """Symbols whose name contains, or whose qualified name ends with, the given text.

    The exact filters (``name``, ``qualified_name``, ``path`` prefix) narrow further.
    """
    needle = _needle("nameContains", name_contains)
    suffix = _needle("qualifiedNameSuffix", qualified_name_suffix)
    if needle is None and suffix is None:
        raise ValidationError("give nameContains or qualifiedNameSuffix")
    rows = gateway.read(
        FUZZY_SYMBOLS if repo is None else FUZZY_IN_REPO,
        needle=needle,
        suffix=suffix,
        tail=name_tail(suffix),
        name=name,
        qualified_name=qualified_name,
        path=path,
        repo=repo,
        ref=ref,
        kind=kind,
        first=max(1, min(first, MAX_FIRST + 1)),
        after=after,
        repos=repos,
        timeout=timeout,
        **as_of.params(),
    )
    views = [SymbolView.of(r["node"], r["state"]) for r in rows]
    return Positions(gateway).symbols(views, as_of, timeout=timeout)

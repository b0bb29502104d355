"""What a call-graph answer could not see: unresolved call sites that may reach a symbol.

The resolver keeps every call it could not link to one declaration as
``callee@line`` on the calling Symbol's (or File's) state (``unresolved_calls``;
under ontology v4 a Symbol's are ``callee@+offset`` from its start, placed by
the reads as of their moment).
A site whose called name (the last segment of the callee as written) equals a
symbol's name may be a call of that symbol, so an empty list of callers (or of
tests in an impact answer) is only "nothing found", never "nothing there",
while such sites exist. This module counts them for a set of symbols and keeps
a few locations as a sample: the symbols' names are read, then their sites, through a
full-text index of the sites or, for names it cannot search, from every state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from strata.temporal import as_of_predicate

SAMPLE = 10
INDEX = "strata_unresolved_calls"  # migrations/0013: STATE.unresolved_calls, simple analyzer
MAX_INDEXED_NAMES = 512  # more names than this read the repository's states instead
_LETTERS = re.compile(r"[^\W\d_]+")  # what the simple analyzer keeps: runs of letters

_STATE = as_of_predicate("st")
_REPOS = "($repos IS NULL OR x.repo IN $repos)"

# The called name of `u` ("self._store.values@12" -> "values"; "a::b@3" -> "b"): the
# callee is everything before the last '@' (the line), its name the last segment after
# a '.' or ':'. Computed once per site and looked up among the names: testing each name
# against each site with CONTAINS cost names x sites string scans (1.5 s for an impact
# answer's ~100 names over Django's 86k unresolved sites).
_NAME_OF_U = "last(split(replace(left(u, size(u) - size(last(split(u, '@'))) - 1), ':', '.'), '.'))"

# The symbols' names, repository and ref: what both reads below look for, and where.
SYMBOL_NAMES = """
MATCH (t:Symbol) WHERE t.key IN $keys
RETURN t.key AS key, t.name AS name, t.repo AS repo, t.ref AS ref
"""

_SITES = """
  MATCH (x:{label}) WHERE x.repo = $repo AND x.ref = $ref{extra}
  MATCH (x)-[st:STATE]->(x)
  WHERE {state} AND st.unresolved_calls IS NOT NULL AND {repos}
  UNWIND [u IN st.unresolved_calls WHERE {name} IN $names] AS u
  WITH x, u ORDER BY x.path, x.qualname, u
  RETURN {{path: x.path, caller: x.qualname, key: x.key, site: u, name: {name}}}
"""

# The count, a sample and the count per name, of the matching sites in `hits`.
_SUMMARY = """
RETURN $names AS names, size(hits) AS total, hits[..$sample] AS sample,
       [n IN $names | [n, size([h IN hits WHERE h.name = n])]] AS by_name
"""

# Every open unresolved site of the repository and ref whose called name is one of
# $names, read from every state (Symbol states, then File states): the fallback for
# names the full-text index below cannot search.
_SYMBOL_SITES = _SITES.format(
    label="Symbol", extra=" AND x.path IS NOT NULL", state=_STATE, repos=_REPOS, name=_NAME_OF_U
)
_FILE_SITES = _SITES.format(label="File", extra="", state=_STATE, repos=_REPOS, name=_NAME_OF_U)
UNRESOLVED_MATCHING = (
    f"WITH COLLECT {{{_SYMBOL_SITES}}} + COLLECT {{{_FILE_SITES}}} AS hits" + _SUMMARY
)

# The same answer from the full-text index: its hits are every state version, of any
# repository, holding a site whose letters match one of the names; the repository,
# the moment and the exact called name are then checked as above. Symbol sites
# first, then File sites, each in (path, caller, site) order, as the scan gives them.
UNRESOLVED_INDEXED = f"""
CALL db.index.fulltext.queryRelationships($index, $lucene) YIELD relationship AS st
WITH st, startNode(st) AS x
WHERE x.repo = $repo AND x.ref = $ref AND ((x:Symbol AND x.path IS NOT NULL) OR x:File)
  AND {_STATE} AND {_REPOS}
UNWIND [u IN st.unresolved_calls WHERE {_NAME_OF_U} IN $names] AS u
WITH x, u
ORDER BY CASE WHEN x:File THEN 1 ELSE 0 END, x.path, x.qualname, u
WITH collect({{path: x.path, caller: x.qualname, key: x.key, site: u, name: {_NAME_OF_U}}}) AS hits
{_SUMMARY}"""


def lucene_query(names: list[str]) -> str | None:
    """The full-text query whose hits hold every site that may call one of ``names``
    (each name's letter runs as a phrase), or None when the index cannot answer: a
    name without letters, or more names than :data:`MAX_INDEXED_NAMES`."""
    phrases = set()
    for name in names:
        runs = _LETTERS.findall(name)
        if not runs:
            return None
        phrases.add('"' + " ".join(run.lower() for run in runs) + '"')
    if not phrases or len(phrases) > MAX_INDEXED_NAMES:
        return None
    return " OR ".join(sorted(phrases))


@dataclass(frozen=True, slots=True)
class UnresolvedSite:
    """One call the resolver could not link: where it is and what it says."""

    path: str
    caller: str | None  # qualname of the calling symbol; None: a call at file level
    callee: str  # the callee as written, e.g. "self._store.values"
    line: int


@dataclass(frozen=True, slots=True)
class Unresolved:
    """Unresolved call sites in the repository whose called name matches ``names``.

    ``count`` is the number of such sites (each may or may not reach one of the
    symbols); ``sample`` shows a few of them, ``by_name`` splits the count.
    """

    names: tuple[str, ...] = ()
    count: int = 0
    by_name: dict[str, int] = field(default_factory=dict)
    sample: tuple[UnresolvedSite, ...] = ()

    @classmethod
    def from_row(cls, row: dict[str, Any] | None) -> Unresolved:
        if row is None:
            return cls()
        sample = tuple(_site(s) for s in row["sample"])
        by_name = {str(n): int(c) for n, c in row["by_name"] if int(c)}
        return cls(tuple(sorted(row["names"])), int(row["total"]), by_name, sample)

    @classmethod
    def within(cls, path: str, qualname: str, state: dict[str, Any]) -> Unresolved:
        """The calls inside one symbol that were not linked (from its state)."""
        texts = [str(u) for u in state.get("unresolved_calls") or ()]
        sites = [_site({"path": path, "caller": qualname, "site": t}) for t in texts]
        by_name: dict[str, int] = {}
        for site in sites:
            name = called_name(site.callee)
            by_name[name] = by_name.get(name, 0) + 1
        return cls(tuple(sorted(by_name)), len(sites), by_name, tuple(sites[:SAMPLE]))


def called_name(callee: str) -> str:
    """The called name of a callee as written: ``self._store.values`` -> ``values``,
    ``a::b`` -> ``b`` (as :data:`_NAME_OF_U` reads it in the database)."""
    return callee.replace(":", ".").rsplit(".", 1)[-1]


def _site(row: dict[str, Any]) -> UnresolvedSite:
    text = str(row["site"])
    callee, _, line = text.rpartition("@")
    return UnresolvedSite(
        path=str(row["path"]),
        caller=row["caller"],
        callee=callee or text,
        line=int(line) if line.isdigit() else 0,
    )

"""As-of reads of the code layer: symbols, callers and callees, impact.

Every query filters facts with the shared as-of predicate and, when the caller
is limited to some repositories, by ``repo`` on every node it returns. Answers
are bounded and carry their evidence (path, lines, commit): absolute lines as of
the read's moment, placed from the File layouts visible then
(:mod:`strata.code.positions`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from strata.code.layout import RELATIVE, SEP, decode_layout, file_key_of, place_symbol
from strata.code.positions import Positions
from strata.code.unseen import (
    INDEX,
    SAMPLE,
    SYMBOL_NAMES,
    UNRESOLVED_INDEXED,
    UNRESOLVED_MATCHING,
    Unresolved,
    UnresolvedSite,
    lucene_query,
)
from strata.code.views import BranchView, CallHit, CallList, ImpactView, SymbolView
from strata.graph.gateway import Gateway
from strata.graph.reads import FactVersion, Reads
from strata.ontology.model import Ontology
from strata.temporal import AsOf, as_of_predicate, decode_fact, fact_projection

__all__ = [
    "BranchView",
    "CallHit",
    "CallList",
    "CodeReads",
    "ImpactView",
    "SymbolView",
    "Unresolved",
    "UnresolvedSite",
]

MAX_DEPTH = 5
MAX_FIRST = 200
FRONTIER_CAP = 2000

_STATE = as_of_predicate("st")
_EDGE = as_of_predicate("c")
_REPOS = "($repos IS NULL OR {var}.repo IN $repos)"
_STATE_PROPS = fact_projection("st")
_EDGE_PROPS = fact_projection("c")
# A name-only guess (resolution `name_only`) is walked only when the caller asks for guesses.
_GUESSES = "($guesses OR c.resolution IS NULL OR c.resolution <> 'name_only')"

# A repository's symbols, through their (repo, ref, path) index: the hint and the two
# existence predicates let that index serve its first key alone. Left to itself the
# planner ranged over the valid_at index of every STATE in the graph (the changes window:
# 1.6 s) or read every symbol of the graph (a name-part lookup: 1.8 s), on a graph
# holding five Django-sized repositories; from here the cost is the repository's own.
REPO_SYMBOLS = """
MATCH (s:Symbol)
USING INDEX s:Symbol(repo, ref, path)
WHERE s.repo = $repo AND s.ref IS NOT NULL AND s.path IS NOT NULL"""

# The point lookup reads the symbol's span off its File's layout in the same round trip.
SYMBOL_BY_KEY = f"""
MATCH (s:Symbol {{key: $key}})-[st:STATE]->(s)
WHERE {_STATE} AND {_REPOS.format(var="s")}
WITH s, st
LIMIT 1
OPTIONAL MATCH (f:File {{key: $file}})-[fs:STATE]->(f)
WHERE {as_of_predicate("fs")}
RETURN properties(s) AS node, {_STATE_PROPS} AS state,
       [e IN coalesce(fs.layout, []) WHERE e STARTS WITH s.qualname + $sep][0] AS span
LIMIT 1
"""

SYMBOLS_BY_NAME = f"""
MATCH (s:Symbol {{name: $name}})
WHERE {_REPOS.format(var="s")} AND ($ref IS NULL OR s.ref = $ref) AND s.key > $after
MATCH (s)-[st:STATE]->(s)
WHERE {_STATE} AND ($kind IS NULL OR st.kind = $kind)
  AND ($qualified_name IS NULL OR st.qualified_name = $qualified_name)
  AND ($path IS NULL OR s.path STARTS WITH $path)
RETURN properties(s) AS node, {_STATE_PROPS} AS state
ORDER BY s.key
LIMIT $first
"""

SYMBOLS_BY_PATH = f"""
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref AND s.path STARTS WITH $path AND s.key > $after
  AND {_REPOS.format(var="s")}
MATCH (s)-[st:STATE]->(s)
WHERE {_STATE} AND ($kind IS NULL OR st.kind = $kind)
RETURN properties(s) AS node, {_STATE_PROPS} AS state
ORDER BY s.key
LIMIT $first
"""

CALLERS_STEP = f"""
UNWIND $frontier AS target
MATCH (t:Symbol {{key: target}})<-[c:CALLS]-(x)
WHERE {_EDGE} AND {_REPOS.format(var="x")} AND {_GUESSES}
WITH target, x, c
LIMIT $cap
OPTIONAL MATCH (x)-[st:STATE]->(x)
WHERE {_STATE}
RETURN target AS via, x.key AS key, labels(x)[0] AS label, x.path AS path, x.repo AS repo,
       x.qualname AS qualname, x.key AS src, labels(x)[0] AS src_label, x.qualname AS src_qualname,
       {_EDGE_PROPS} AS edge, {_STATE_PROPS} AS state
"""

# The calling side is a Symbol or a File (module-level calls). Named by label, its key
# is sought in both key indexes; unlabelled, the planner read every CALLS edge of the
# graph instead (650k edges, 2.7 s a hop on a graph holding Django).
CALLEES_STEP = f"""
UNWIND $frontier AS source
MATCH (f {{key: source}})
WHERE f:Symbol OR f:File
MATCH (f)-[c:CALLS]->(x:Symbol)
WHERE {_EDGE} AND {_REPOS.format(var="x")} AND {_GUESSES}
WITH source, f, x, c
LIMIT $cap
OPTIONAL MATCH (x)-[st:STATE]->(x)
WHERE {_STATE}
RETURN source AS via, x.key AS key, labels(x)[0] AS label, x.path AS path, x.repo AS repo,
       x.qualname AS qualname, f.key AS src, labels(f)[0] AS src_label, f.qualname AS src_qualname,
       {_EDGE_PROPS} AS edge, {_STATE_PROPS} AS state
"""

OPEN_FILE_PATHS = """
MATCH (f:File)-[r:STATE]->(f)
WHERE f.repo = $repo AND f.ref = $ref AND r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN f.path AS path
"""

OPEN_SYMBOLS_OF = """
UNWIND $paths AS path
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref AND s.path = path
MATCH (s)-[r:STATE]->(s)
WHERE r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN path, s.qualname AS qualname
"""


BRANCHES = f"""
MATCH (b:Branch)
WHERE b.repo = $repo
MATCH (b)-[st:STATE]->(b)
WHERE {_STATE}
RETURN b.ref AS ref, {_STATE_PROPS} AS state
ORDER BY b.ref
"""

FILE_AS_OF = f"""
MATCH (f:File {{key: $key}})-[st:STATE]->(f)
WHERE {_STATE} AND {_REPOS.format(var="f")}
RETURN properties(f) AS node, {_STATE_PROPS} AS state
LIMIT 1
"""


class CodeReads:
    """Code-layer queries; ``repos`` limits every answer (None: all repositories)."""

    def __init__(self, gateway: Gateway, ontology: Ontology) -> None:
        self._gateway = gateway
        self._ontology = ontology
        self._positions = Positions(gateway)

    @property
    def positions(self) -> Positions:
        return self._positions

    def symbol(
        self,
        key: str,
        as_of: AsOf,
        *,
        repos: list[str] | None = None,
        timeout: float | None = None,
    ) -> SymbolView | None:
        rows = self._gateway.read(
            SYMBOL_BY_KEY,
            key=key,
            file=file_key_of(key),
            sep=SEP,
            repos=repos,
            timeout=timeout,
            **as_of.params(),
        )
        if not rows:
            return None
        view = SymbolView.of(rows[0]["node"], rows[0]["state"])
        span = decode_layout([rows[0]["span"]] if rows[0]["span"] else []).span(view.qualname)
        return replace(view, state=place_symbol(view.state, span))

    def find_symbols(
        self,
        as_of: AsOf,
        *,
        name: str | None = None,
        qualified_name: str | None = None,
        repo: str | None = None,
        ref: str | None = None,
        path: str | None = None,
        kind: str | None = None,
        first: int = 20,
        after: str = "",
        repos: list[str] | None = None,
        timeout: float | None = None,
    ) -> list[SymbolView]:
        """Symbols by name (or the last segment of a qualified name) or by path prefix."""
        first = max(1, min(first, MAX_FIRST))
        if name is None and qualified_name is not None:
            name = _last_segment(qualified_name)
        if name is not None:
            rows = self._gateway.read(
                SYMBOLS_BY_NAME,
                name=name,
                qualified_name=qualified_name,
                ref=ref,
                path=path,
                kind=kind,
                first=first,
                after=after,
                repos=_narrow(repos, repo),
                timeout=timeout,
                **as_of.params(),
            )
        elif path is not None and repo is not None:
            rows = self._gateway.read(
                SYMBOLS_BY_PATH,
                repo=repo,
                ref=ref or "main",
                path=path,
                kind=kind,
                first=first,
                after=after,
                repos=repos,
                timeout=timeout,
                **as_of.params(),
            )
        else:
            return []
        views = [SymbolView.of(r["node"], r["state"]) for r in rows]
        return self._positions.symbols(views, as_of, timeout=timeout)

    def callers(
        self,
        key: str,
        as_of: AsOf,
        *,
        depth: int = 1,
        first: int = 10,
        unresolved: bool = True,
        repos: list[str] | None = None,
        timeout: float | None = None,
    ) -> CallList:
        """Who calls the symbol, breadth first up to ``depth`` hops (nearest first).

        A symbol that calls itself is its own caller (at depth 1). With
        ``unresolved`` (two more queries: :meth:`unresolved_matching`) the
        answer also counts the unresolved call sites named like
        the symbol or a caller short of the last hop: any of them may be a caller
        the graph does not hold (:class:`CallList`).
        """
        found = self._walk(
            CALLERS_STEP, key, as_of, depth=depth, first=MAX_FIRST, repos=repos, timeout=timeout
        )
        unseen = None
        if unresolved:
            keys = [key, *(h.key for h in found if h.label == "Symbol" and h.depth < depth)]
            unseen = self.unresolved_matching(keys, as_of, repos=repos, timeout=timeout)
        first = max(1, min(first, MAX_FIRST))
        return CallList(found[:first], total=len(found), unresolved=unseen)

    def callees(
        self,
        key: str,
        as_of: AsOf,
        *,
        depth: int = 1,
        first: int = 10,
        repos: list[str] | None = None,
        timeout: float | None = None,
    ) -> CallList:
        """What the symbol calls, breadth first up to ``depth`` hops.

        A symbol that calls itself is its own callee (at depth 1). ``unresolved``
        holds the calls inside the symbol that the resolver could not link.
        """
        found = self._walk(
            CALLEES_STEP, key, as_of, depth=depth, first=MAX_FIRST, repos=repos, timeout=timeout
        )
        view = self.symbol(key, as_of, repos=repos, timeout=timeout)
        first = max(1, min(first, MAX_FIRST))
        own = Unresolved.within(view.path, view.qualname, view.state) if view else Unresolved()
        return CallList(found[:first], total=len(found), unresolved=own)

    def _walk(
        self,
        step: str,
        key: str,
        as_of: AsOf,
        *,
        depth: int,
        first: int,
        repos: list[str] | None,
        timeout: float | None,
        guesses: bool = True,
    ) -> list[CallHit]:
        depth = max(1, min(depth, MAX_DEPTH))
        first = max(1, min(first, MAX_FIRST))
        seen = {key}
        frontier = [key]
        found: list[CallHit] = []
        placing: list[dict[str, Any]] = []  # each hit's row, to place its lines at the end
        params = as_of.params()
        for level in range(1, depth + 1):
            if not frontier:
                break
            rows = self._gateway.read(
                step,
                frontier=frontier,
                cap=FRONTIER_CAP,
                repos=repos,
                guesses=guesses,
                timeout=timeout,
                **params,
            )
            rows.sort(key=lambda r: (r["via"], -float(r["edge"].get("confidence", 0)), r["key"]))
            frontier = []
            for row in rows:
                recursive = level == 1 and row["key"] == key  # a self-call: reported, not walked
                if row["key"] in seen and not recursive:
                    continue
                seen.add(row["key"])
                edge = row["edge"]
                placing.append(row)
                found.append(
                    CallHit(
                        key=row["key"],
                        label=row["label"],
                        repo=row["repo"],
                        path=row["path"],
                        depth=level,
                        via=row["via"],
                        line=0,  # placed below, from the calling side's start
                        lines=(),
                        confidence=float(edge.get("confidence", 0)),
                        resolution=str(edge.get("resolution", "")),
                        commit=edge.get("source_commit"),
                        state=decode_fact(row["state"] or {}),
                    )
                )
                if row["label"] == "Symbol" and not recursive:
                    frontier.append(row["key"])
        found = self._positions.hits(found, placing, as_of, timeout=timeout)
        found.sort(key=lambda h: (h.depth, -h.confidence, h.key))
        return found[:first]

    def impact(
        self,
        key: str,
        as_of: AsOf,
        *,
        depth: int = MAX_DEPTH,
        first: int = 50,
        repos: list[str] | None = None,
        timeout: float | None = None,
        include_guesses: bool = False,
    ) -> ImpactView:
        """Transitive callers, the entrypoints among them, the tests that reach the symbol,
        and the unresolved call sites named like the symbol or any of its callers.

        Calls linked by name alone (``name_only``) are not followed unless
        ``include_guesses``: an impact answer is read as "what breaks", and a guess
        there is an invented dependency.
        """
        callers = self._walk(
            CALLERS_STEP,
            key,
            as_of,
            depth=depth,
            first=MAX_FIRST,
            repos=repos,
            timeout=timeout,
            guesses=include_guesses,
        )
        entrypoints = [h for h in callers if h.state.get("entrypoint")]
        tests = [h for h in callers if h.state.get("test_framework")]
        reached = [key, *(h.key for h in callers if h.label == "Symbol")]
        unresolved = self.unresolved_matching(reached, as_of, repos=repos, timeout=timeout)
        return ImpactView(
            callers[:first], entrypoints[:first], tests[:first], unresolved, len(callers)
        )

    def unresolved_matching(
        self,
        keys: list[str],
        as_of: AsOf,
        *,
        sample: int = SAMPLE,
        repos: list[str] | None = None,
        timeout: float | None = None,
    ) -> Unresolved:
        """Unresolved call sites of the symbols' repository and ref whose called name is one
        of the symbols' names (``sample`` locations kept).

        The symbols' names are read first; their sites are then found through the
        full-text index of unresolved calls, or, for names it cannot search (no
        letters, too many), by reading every symbol state of the repository.
        """
        if not keys:
            return Unresolved()
        symbols = self._gateway.read(SYMBOL_NAMES, keys=keys, timeout=timeout)
        if not symbols:
            return Unresolved()
        names = sorted({str(r["name"]) for r in symbols})
        first = next((r for r in symbols if r["key"] == keys[0]), symbols[0])
        lucene = lucene_query(names)
        params: dict[str, Any] = {
            "names": names,
            "repo": first["repo"],
            "ref": first["ref"],
            "sample": sample,
            "repos": repos,
            **as_of.params(),
        }
        if lucene is None:
            rows = self._gateway.read(UNRESOLVED_MATCHING, timeout=timeout, **params)
        else:
            rows = self._gateway.read(
                UNRESOLVED_INDEXED, index=INDEX, lucene=lucene, timeout=timeout, **params
            )
        row = rows[0] if rows else None
        if row is not None and any(RELATIVE in str(h["site"]) for h in row["sample"]):
            row = {**row, "sample": self._positions.sites(row["sample"], as_of, timeout=timeout)}
        return Unresolved.from_row(row)

    def history(
        self, key: str, *, limit: int | None = None, timeout: float | None = None
    ) -> list[FactVersion]:
        """Every version of a symbol's state (the first ``limit``), each with the span it
        had at the last moment it was valid and believed (now, for the current one)."""
        versions = Reads(self._gateway, self._ontology).state_history(
            "Symbol", key, limit=limit, timeout=timeout
        )
        return self._positions.versions(key, versions, timeout=timeout)

    def branches(self, repo: str, as_of: AsOf, *, timeout: float | None = None) -> list[BranchView]:
        """The indexed refs of a repository and their heads."""
        rows = self._gateway.read(BRANCHES, repo=repo, timeout=timeout, **as_of.params())
        views = []
        for row in rows:
            state = decode_fact(row["state"])
            views.append(
                BranchView(
                    ref=row["ref"],
                    head=state["head"],
                    committed_at=state.get("committed_at"),
                    files=state.get("files"),
                    symbols=state.get("symbols"),
                    valid_at=state["valid_at"],
                )
            )
        return views

    def file(
        self,
        key: str,
        as_of: AsOf,
        *,
        repos: list[str] | None = None,
        timeout: float | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """A file's identity and state as of a moment."""
        rows = self._gateway.read(
            FILE_AS_OF, key=key, repos=repos, timeout=timeout, **as_of.params()
        )
        if not rows:
            return None
        return rows[0]["node"], decode_fact(rows[0]["state"])

    # -- used by the indexer -----------------------------------------------------------

    def open_file_paths(self, repo: str, ref: str) -> set[str]:
        rows = self._gateway.read(OPEN_FILE_PATHS, repo=repo, ref=ref)
        return {str(r["path"]) for r in rows}

    def symbol_qualnames(self, repo: str, ref: str, paths: Iterable[str]) -> dict[str, set[str]]:
        wanted = sorted(paths)
        found: dict[str, set[str]] = {p: set() for p in wanted}
        for row in self._gateway.read(OPEN_SYMBOLS_OF, repo=repo, ref=ref, paths=wanted):
            found[row["path"]].add(row["qualname"])
        return found


def _last_segment(qualified: str) -> str:
    for sep in ("::", ":", "."):
        qualified = qualified.rsplit(sep, 1)[-1]
    return qualified


def _narrow(repos: list[str] | None, repo: str | None) -> list[str] | None:
    if repo is None:
        return repos
    if repos is None or repo in repos:
        return [repo]
    return []

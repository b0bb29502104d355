"""Hybrid search: full text, vectors and graph proximity, fused by reciprocal rank.

:meth:`SearchService.search` checks its input (nothing is read or written for
a bad query), brings the repository's search documents up to date, asks the
name, full-text and vector retrievers for ranked keys, lets graph proximity
re-rank them, fuses them (:func:`strata.search.fusion.rrf`), reads the winners'
state as of the requested moment, with evidence, and rolls the ranking up to
files (:mod:`strata.search.rollup`). Every
retriever reads through the same as-of predicate as every other read: a
document matches only if a version with its content is visible then.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from strata.code.layout import EMPTY, Layout, file_key_of, place_symbol
from strata.code.positions import Positions, needs_layout
from strata.errors import NotFound, ValidationError
from strata.graph.gateway import Gateway, checked_label
from strata.search.docs import SearchIndex
from strata.search.fusion import Fused, Ranked, demoted, rrf
from strata.search.rollup import FileScore, file_rollup
from strata.search.text import (
    PREFIX_TERMS,
    check_first,
    check_query,
    coverage_queries,
    lucene_query,
    mentions,
    search_terms,
)
from strata.temporal import AsOf, as_of_predicate, decode_fact

LAYERS: dict[str, tuple[str, ...]] = {
    "code": ("Symbol", "File"),
    "knowledge": ("Requirement", "Decision"),
}
SYMBOL_KINDS = frozenset(
    {
        "class",
        "interface",
        "struct",
        "enum",
        "trait",
        "function",
        "method",
        "constant",
        "type",
        "module",
    }
)
KINDS = SYMBOL_KINDS | {"file", "requirement", "decision"}
POOL = 200  # candidates each index returns before the repository and time filters
# Wider pools, asked only when the filters left too few of the last one.
POOLS = (POOL, 1_600, 12_800)
PER_RETRIEVER = 50
SEEDS = 8  # strong hits whose neighbours the graph retriever boosts
MENTION_MATCHES = 20  # symbols one named identifier may match (a common name: many)
EMBED_PER_SEARCH = 16  # ~5-35 ms each: a search pays at most a fraction of a second
# The sentence encoder reads names and docstrings only, and misses more often than the
# full text (file Acc@5 0.54 vs 0.67 alone on the harness): it counts for half.
WEIGHTS = {"name": 1.0, "fulltext": 1.0, "coverage": 1.0, "vector": 0.5, "graph": 0.3}
# A search names what to read or change: a test file shares its subject's words and
# more, so tests count for less unless the query asks for them. On the retrieval
# harness (102 cases, 6 trees) 0.5 -> 0.1 moved file Acc@5 0.775 -> 0.794 (held-out
# attrs: 0.781 both, Acc@1 0.344 -> 0.469, function Acc@10 0.531 -> 0.594).
TEST_WEIGHT = 0.1
TEST_DIRS = frozenset({"tests", "testing"})  # folders of test code (`django/test/` is not)
_TESTS = frozenset({"test", "tests", "testing", "pytest", "fixture", "fixtures", "spec", "specs"})
# A typing stub (`.pyi`) or declaration file (`.d.ts`) restates the signatures and
# docstrings of code that lives elsewhere: it matches the same words as its module
# and is rarely what a change is made in. Stubs count for less unless the query
# names one or asks about stubs or typing.
STUB_WEIGHT = 0.3
STUB_SUFFIXES = (".pyi", ".d.ts")
_STUBS = frozenset({"stub", "stubs", "pyi", "typing", "typed", "annotations", "declaration"})
# Containment says less about relevance than a call or a trace link does.
REL_WEIGHT = {"CONTAINS": 0.5, "DEFINES": 0.5}

_ENCODER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="search-embed")
# Name, full-text and vector reads of concurrent searches (the process bounds how many
# searches run at once: strata_api.heavy in the API).
_READS = ThreadPoolExecutor(max_workers=6, thread_name_prefix="search-read")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,199}")
_ST = as_of_predicate("st")
_C = as_of_predicate("c")

REPOSITORY = "MATCH (r:Repository) WHERE r.repo = $repo RETURN r.repo AS repo LIMIT 1"

# An index answers its `pool` best documents before any filter: of every repository
# (the vector index cannot filter), of every past version, of every kind. The filters
# run on that pool in one subquery, which also says how many candidates the index gave
# and the lowest score among them, so the caller can tell a pool that another
# repository or old versions filled (ask again, wider) from an exhausted index.
_JOIN = f"""
WITH collect([d, score]) AS found, count(*) AS raw, min(score) AS floor
CALL {{
  WITH found
  UNWIND found AS f
  WITH f[0] AS d, f[1] AS score
  WHERE score >= $min_score AND d.repo = $repo AND d.label IN $labels
    AND ($kinds IS NULL OR d.kind IN $kinds)
    AND ($ref IS NULL OR d.ref = $ref)
  MATCH (d)-[:INDEXES]->(n)-[st:STATE]->(n)
  WHERE st.hash = d.hash AND {_ST}
  WITH n.key AS key, d.label AS label, coalesce(n.path, st.source_path) AS path,
       coalesce(d.test, false) AS test, max(score) AS score
  ORDER BY score DESC, key
  LIMIT $limit
  RETURN collect({{key: key, label: label, path: path, test: test, score: score}}) AS rows
}}
RETURN raw, floor, rows
"""

FULLTEXT = (
    "CALL db.index.fulltext.queryNodes('strata_search_text', $lucene, {limit: $pool})"
    " YIELD node AS d, score" + _JOIN
)

# Neo4j reports cosine as (1 + cos) / 2; unrelated sentences score about 0.15
# cosine with this encoder (0.57 here), so below 0.55 a vector hit is noise.
VECTOR_MIN = 0.55
VECTOR = (
    "CALL db.index.vector.queryNodes('strata_search_vector', $pool, $vector)"
    " YIELD node AS d, score" + _JOIN
)

# A repository small enough is scored exactly instead, when the index's pool held too few
# of its documents (a small repository in a graph that also holds large ones: the top of
# the index is theirs). One pass over at most EXACT_MAX vectors (~60 ms for 1,500) instead
# of widening the pool to 1,600 and 12,800 candidates (~235 ms); a larger repository
# answers no rows (raw 0) and the pool widens as before.
EXACT_MAX = 4_000
VECTOR_EXACT = (
    """
MATCH (d:SearchDoc {repo: $repo, embedded: true})
WITH collect(d) AS docs
UNWIND CASE WHEN size(docs) <= $exact_max THEN docs ELSE [] END AS d
WITH d, vector.similarity.cosine(d.embedding, $vector) AS score"""
    + _JOIN
)

# Files by how many of the query's words they hold (strata.search.text.coverage_queries):
# one index read per word, each over File documents only, counted per document; only
# the best COVERAGE_SCAN documents are then checked against the time asked (a document
# is one version of a file: its state must hold then). Checking every hit of every word
# first cost twice as long on the Django sdist (median 23.5 -> 10.5 ms, same rankings
# at each of 12 indexed times); the scan leaves room for 7 past versions per file kept.
COVERAGE_POOL = 400  # files one word may bring (a word in more files says little)
COVERAGE_SCAN = 400  # documents checked against the time asked, best counts first
COUNTED = frozenset({"coverage"})  # retrievers whose equal scores share a rank
COVERAGE_MIN_TERMS = 2  # one word's coverage is its full-text ranking again
COVERAGE = f"""
UNWIND $clauses AS clause
CALL db.index.fulltext.queryNodes('strata_search_text', clause, {{limit: $pool}})
YIELD node AS d, score
WITH clause, d, score
WHERE d.repo = $repo AND d.label = 'File' AND ($ref IS NULL OR d.ref = $ref)
WITH d, count(clause) AS covered, sum(score) AS weight
ORDER BY covered DESC, weight DESC
LIMIT $scan
MATCH (d)-[:INDEXES]->(n)-[st:STATE]->(n)
WHERE st.hash = d.hash AND {_ST}
WITH n.key AS key, n.path AS path, coalesce(d.test, false) AS test,
     max(covered) AS covered, max(weight) AS weight
RETURN key, 'File' AS label, path, test, covered AS score
ORDER BY covered DESC, weight DESC, key
LIMIT $limit
"""

# The cheap case: a query that is one identifier, matched on the symbol's name
# case-insensitively (exact, then prefix, then substring).
NAME = f"""
MATCH (d:SearchDoc)
WHERE d.lname CONTAINS $needle AND d.repo = $repo AND d.label = 'Symbol' AND 'Symbol' IN $labels
  AND ($kinds IS NULL OR d.kind IN $kinds) AND ($ref IS NULL OR d.ref = $ref)
WITH d, CASE WHEN d.lname = $needle THEN 3.0
             WHEN d.lname STARTS WITH $needle THEN 2.0 ELSE 1.0 END AS score
MATCH (d)-[:INDEXES]->(n)-[st:STATE]->(n)
WHERE st.hash = d.hash AND {_ST}
WITH n.key AS key, n.path AS path, coalesce(d.test, false) AS test, max(score) AS score,
     size(d.lname) AS length
RETURN key, 'Symbol' AS label, path, test, score
ORDER BY score DESC, length, key
LIMIT $limit
"""

# What a longer query names exactly (strata.search.text.mentions): symbols by name,
# files by path (the whole path, or its end after a slash); a file named counts most.
MENTIONS = f"""
CALL () {{
  UNWIND $names AS name
  CALL (name) {{
    MATCH (d:SearchDoc)
    WHERE d.lname = name AND d.repo = $repo AND d.label = 'Symbol'
      AND ($ref IS NULL OR d.ref = $ref)
    MATCH (d)-[:INDEXES]->(n)-[st:STATE]->(n)
    WHERE st.hash = d.hash AND {_ST}
    RETURN d, n, st LIMIT {MENTION_MATCHES}
  }}
  RETURN d, n, st, 2.0 AS score
  UNION ALL
  UNWIND $files AS file
  CALL (file) {{
    MATCH (d:SearchDoc)
    WHERE (d.lname = file OR d.lname ENDS WITH '/' + file) AND d.repo = $repo
      AND d.label = 'File' AND ($ref IS NULL OR d.ref = $ref)
    MATCH (d)-[:INDEXES]->(n)-[st:STATE]->(n)
    WHERE st.hash = d.hash AND {_ST}
    RETURN d, n, st LIMIT {MENTION_MATCHES}
  }}
  RETURN d, n, st, 3.0 AS score
}}
WITH d, n, st, score
WHERE d.label IN $labels AND ($kinds IS NULL OR d.kind IN $kinds)
WITH n.key AS key, d.label AS label, coalesce(n.path, st.source_path) AS path,
     coalesce(d.test, false) AS test, max(score) AS score, min(size(d.lname)) AS length
RETURN key, label, path, test, score
ORDER BY score DESC, length, key
LIMIT $limit
"""

NEIGHBOURS = f"""
UNWIND $seeds AS seed
MATCH (s {{key: seed.key}})
WHERE (s:Symbol OR s:File) AND labels(s)[0] = seed.label
MATCH (s)-[c:CALLS|CONTAINS|DEFINES|INHERITS|IMPLEMENTS_TYPE|IMPLEMENTED_BY|AFFECTS|VERIFIED_BY]-(x)
WHERE x.key IN $known AND {_C} AND x.repo = $repo AND labels(x)[0] IN $labels
  AND ($ref IS NULL OR x.ref IS NULL OR x.ref = $ref)
RETURN seed.key AS seed, x.key AS key, labels(x)[0] AS label, x.path AS path, type(c) AS rel
LIMIT 2000
"""

HYDRATE = f"""
UNWIND $keys AS k
MATCH (n:{{label}} {{{{key: k}}}})-[st:STATE]->(n)
WHERE {_ST}
RETURN n.key AS key, properties(n) AS node,
       st{{{{.kind, .qualified_name, .signature, .docstring, .line_start, .line_end, .line,
            .path, .text, .title, .summary, .status, .source_commit, .source_path,
            valid_at: toString(st.valid_at)}}}} AS state
"""


@dataclass(frozen=True, slots=True)
class Match:
    """Why a hit was found: one retriever, its rank (1 = best) and raw score."""

    retriever: str  # name | fulltext | coverage | vector | graph
    rank: int
    score: float
    via: str | None = None  # graph: the strong hit (and relationship) it neighbours


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where the hit's content comes from."""

    path: str | None
    line_start: int | None
    line_end: int | None
    commit: str | None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: what it is, its fused score, why it matched, and its evidence."""

    key: str
    label: str
    kind: str
    name: str
    qualified_name: str
    repo: str
    ref: str | None
    score: float
    matches: tuple[Match, ...]
    evidence: Evidence
    summary: str | None
    valid_at: str | None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The hits, and what the search could not see (documents not embedded yet)."""

    query: str
    repository: str
    hits: list[SearchHit]
    as_of: AsOf
    retrievers: tuple[str, ...]
    pending_embeddings: int = 0
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # ms per stage
    # Files ranked by their own and their symbols' fused scores (strata.search.rollup).
    files: list[FileScore] = field(default_factory=list)


def check_layers(layers: Sequence[str] | None) -> tuple[str, ...]:
    """The node labels of the requested layers; unknown layers are refused."""
    if layers is None:
        return tuple(label for labels in LAYERS.values() for label in labels)
    unknown = sorted(set(layers) - set(LAYERS))
    if unknown or not layers:
        raise ValidationError(
            f"unknown layer(s): {', '.join(unknown) or '(none given)'}",
            field="layers",
            allowed=sorted(LAYERS),
        )
    return tuple(label for layer in LAYERS if layer in layers for label in LAYERS[layer])


RETRIEVERS = ("name", "fulltext", "coverage", "vector", "graph")


def check_retrievers(retrievers: Sequence[str] | None) -> frozenset[str]:
    """The retrievers to run (all by default); unknown names are a ValidationError."""
    if retrievers is None:
        return frozenset(RETRIEVERS)
    unknown = sorted(set(retrievers) - set(RETRIEVERS))
    if unknown or not retrievers:
        raise ValidationError(
            f"unknown or no retrievers {unknown or list(retrievers)}; use {', '.join(RETRIEVERS)}",
            field="retrievers",
        )
    return frozenset(retrievers)


def check_kinds(kinds: Sequence[str] | None) -> list[str] | None:
    if kinds is None:
        return None
    unknown = sorted(set(kinds) - KINDS)
    if unknown or not kinds:
        raise ValidationError(
            f"unknown kind(s): {', '.join(unknown) or '(none given)'}",
            field="kinds",
            allowed=sorted(KINDS),
        )
    return sorted(set(kinds))


class SearchService:
    """Search over one repository at a time; the caller's readable repositories bound it."""

    def __init__(
        self, gateway: Gateway, index: SearchIndex, *, embed_per_search: int = EMBED_PER_SEARCH
    ) -> None:
        self._gateway = gateway
        self._index = index
        self._embed_per_search = embed_per_search

    def warm(self) -> None:
        """Load the query encoder now (a long-lived server), not in its first search."""
        if self._index.embed is not None:
            self._index.embed(["warm up"])

    def search(
        self,
        query: str,
        repository: str,
        *,
        layers: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        first: int = 10,
        as_of: AsOf | None = None,
        ref: str | None = None,
        repos: Sequence[str] | None = None,
        timeout: float | None = None,
        retrievers: Sequence[str] | None = None,
    ) -> SearchResult:
        """The best ``first`` hits for ``query`` in ``repository`` as of ``as_of``.

        ``retrievers`` keeps only some of name, fulltext, vector and graph (default:
        all), so a benchmark can measure each alone and in combination.
        """
        text = check_query(query)
        use = check_retrievers(retrievers)
        labels = check_layers(layers)
        wanted_kinds = check_kinds(kinds)
        first = check_first(first)
        as_of = as_of or AsOf.at()
        clock = _Clock()
        embed = self._index.embed
        # The query's vector is computed while the database answers the other reads.
        pending = (
            _ENCODER.submit(embed, [text[:1000]]) if embed is not None and "vector" in use else None
        )
        self._require_readable(repository, repos)
        # One round trip says whether the repository is indexed and brings its
        # documents up to date (writing nothing for an unknown one).
        synced = self._index.sync(repository, embed_budget=self._embed_per_search)
        if not synced.known:
            raise self._not_found(repository)
        clock.lap("sync")
        params: dict[str, Any] = {
            "repo": repository,
            "labels": list(labels),
            "kinds": wanted_kinds,
            "ref": ref,
            "limit": PER_RETRIEVER,
            **as_of.params(),
        }
        found = _Found()
        terms = search_terms(text)
        # The retrievers are independent reads: sent at once, each on its own session,
        # so a search waits for the slowest of them, not for their sum.
        reads: dict[str, Future[tuple[list[dict[str, Any]], float]]] = {}
        named = mentions(text)
        if "name" in use and _IDENTIFIER.fullmatch(text):
            reads["name"] = _READS.submit(
                _timed, self._gateway.read, NAME, needle=text.lower(), timeout=timeout, **params
            )
        elif "name" in use and (named.names or named.files):
            reads["name"] = _READS.submit(
                _timed,
                self._gateway.read,
                MENTIONS,
                names=list(named.names),
                files=list(named.files),
                timeout=timeout,
                **params,
            )
        if terms and "fulltext" in use:
            lucene = lucene_query(terms, repository, prefixes=len(terms) <= PREFIX_TERMS)
            reads["fulltext"] = _READS.submit(
                _timed,
                self._pooled,
                FULLTEXT,
                params,
                timeout,
                enough=first,
                lucene=lucene,
                min_score=0.0,
            )
        clauses = coverage_queries(terms, repository)
        files_wanted = "File" in labels and (wanted_kinds is None or "file" in wanted_kinds)
        if len(clauses) >= COVERAGE_MIN_TERMS and "coverage" in use and files_wanted:
            reads["coverage"] = _READS.submit(
                _timed,
                self._gateway.read,
                COVERAGE,
                clauses=clauses,
                pool=COVERAGE_POOL,
                scan=COVERAGE_SCAN,
                timeout=timeout,
                **params,
            )
        notes: list[str] = []
        if pending is not None:
            reads["vector"] = _READS.submit(_timed, self._vector, pending, params, timeout, first)
        elif "vector" in use:
            notes.append("no embedder configured: vector retriever skipped")
        for retriever, read in reads.items():  # in this order: ties in the fusion stay put
            rows, own_ms = read.result()
            found.add(retriever, rows)
            clock.laps[retriever] = own_ms  # its own time (vector: with the embedding)
        clock.lap("retrievers")
        if synced.pending:
            notes.append(f"{synced.pending} documents not embedded yet (strata search --embed)")
        rankings, labels_of = found.rankings, found.labels
        seeds = [  # strong hits: what the entity retrievers agree on (coverage ranks files)
            f
            for f in rrf(_entities(rankings), weights=WEIGHTS)[:SEEDS]
            if labels_of.get(f.key) in ("Symbol", "File")
        ]
        if "graph" in use:
            rankings["graph"] = self._neighbours(seeds, found, params, timeout)
            clock.lap("graph")
        fused, files = _fused(rankings, found, terms, named.files)
        hits = self._hydrate(
            fused=fused,
            labels_of=labels_of,
            as_of=as_of,
            kinds=wanted_kinds,
            first=first,
            timeout=timeout,
        )
        clock.lap("hydrate")
        return SearchResult(
            query=text,
            repository=repository,
            hits=hits,
            as_of=as_of,
            retrievers=tuple(rankings),
            pending_embeddings=synced.pending,
            notes=notes,
            timings=clock.laps,
            files=files,
        )

    def _vector(
        self,
        pending: Future[list[list[float]]],
        params: dict[str, Any],
        timeout: float | None,
        enough: int,
    ) -> list[dict[str, Any]]:
        """The vector retriever, once the query's vector is computed."""
        vector = pending.result()[0]
        return self._pooled(
            VECTOR,
            params,
            timeout,
            enough=enough,
            exact=VECTOR_EXACT,
            vector=vector,
            min_score=VECTOR_MIN,
            exact_max=EXACT_MAX,
        )

    def require_repository(
        self, repository: str, repos: Sequence[str] | None, *, timeout: float | None = None
    ) -> None:
        """:class:`NotFound` unless the repository is indexed and readable by the caller."""
        self._require_readable(repository, repos)
        if not self._gateway.read(REPOSITORY, repo=repository, timeout=timeout):
            raise self._not_found(repository)

    def _require_readable(self, repository: str, repos: Sequence[str] | None) -> None:
        """The checks that need no read: a name, and one the caller may read."""
        if not isinstance(repository, str) or not repository.strip():
            raise ValidationError("a repository name is required", field="repository")
        if repos is not None and repository not in repos:
            raise self._not_found(repository)

    @staticmethod
    def _not_found(repository: str) -> NotFound:
        # The same words for unknown and unreadable: a key cannot probe which exist.
        return NotFound(
            f"repository {repository!r} is not indexed (or not readable with this key)",
            hint="index it first: strata index PATH --repo NAME",
            repository=repository,
        )

    def _pooled(
        self,
        query: str,
        params: dict[str, Any],
        timeout: float | None,
        *,
        enough: int,
        exact: str | None = None,
        **extra: Any,
    ) -> list[dict[str, Any]]:
        """One index retriever's rows, widening its pool while the filters starve it.

        One round trip in the common case. Another is asked only while fewer than
        ``enough`` rows survived, the index filled the whole pool (it may hold more)
        and its weakest candidate still passed the score floor (more may pass).
        ``exact`` scores a small repository's documents all at once instead, after
        the first pool (it answers ``raw`` 0 for a repository too large for that).
        """
        rows: list[dict[str, Any]] = []
        for pool in POOLS:
            answer = self._gateway.read(query, timeout=timeout, pool=pool, **params, **extra)
            head = answer[0] if answer else {"raw": 0, "floor": None, "rows": []}
            rows = list(head["rows"])
            floor = head["floor"]
            exhausted = head["raw"] < pool or floor is None or floor < extra["min_score"]
            if len(rows) >= enough or exhausted:
                break
            if exact is not None:
                scored = self._gateway.read(exact, timeout=timeout, **params, **extra)
                if scored and scored[0]["raw"]:
                    return list(scored[0]["rows"])
                exact = None  # too large to score exactly: widen the pool
        return rows

    def _neighbours(
        self,
        seeds: list[Fused],
        found: _Found,
        params: dict[str, Any],
        timeout: float | None,
    ) -> list[Ranked]:
        """Entities next to the strong hits, scored by the fused scores of those hits."""
        if not seeds:
            return []
        rows = self._gateway.read(
            NEIGHBOURS,
            seeds=[{"key": s.key, "label": found.labels[s.key]} for s in seeds],
            # Graph proximity only re-ranks: a neighbour no text or vector retriever
            # found is mostly junk (a file's every import, a class's every method).
            known=list(found.labels),
            timeout=timeout,
            **params,
        )
        weight = {s.key: s.score for s in seeds}
        score: dict[str, float] = defaultdict(float)
        via: dict[str, str] = {}
        for row in rows:
            score[row["key"]] += weight[row["seed"]] * REL_WEIGHT.get(row["rel"], 1.0)
            via.setdefault(row["key"], f"{row['rel']} {row['seed']}")
        ranked = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))[:PER_RETRIEVER]
        return [Ranked(key, value, via[key]) for key, value in ranked]

    def _hydrate(
        self,
        *,
        fused: list[Fused],
        labels_of: dict[str, str],
        as_of: AsOf,
        kinds: list[str] | None,
        first: int,
        timeout: float | None,
    ) -> list[SearchHit]:
        """The winners' state as of the moment, in fused order, cut to ``first``."""
        window = fused[: first * 3]
        by_label: dict[str, list[str]] = defaultdict(list)
        for item in window:
            by_label[labels_of[item.key]].append(item.key)
        # The states of each label and the layouts of the symbols' files (their spans,
        # v4) are independent reads: sent at once.
        states = {
            label: _READS.submit(
                self._gateway.read,
                HYDRATE.format(label=checked_label(label)),
                keys=keys,
                timeout=timeout,
                **as_of.params(),
            )
            for label, keys in by_label.items()
        }
        files = sorted({file_key_of(key) for key in by_label.get("Symbol", [])})
        layouts = (
            _READS.submit(
                Positions(self._gateway).layouts, [(f, as_of) for f in files], timeout=timeout
            )
            if files
            else None
        )
        found: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {}
        for label, rows in states.items():
            for row in rows.result():
                found[row["key"]] = (label, row["node"], decode_fact(row["state"]))
        if layouts is not None:
            found = _placed(found, layouts.result(), as_of)
        hits: list[SearchHit] = []
        for item in window:
            if item.key not in found:
                continue
            hit = _hit(item, *found[item.key])
            if kinds is not None and hit.kind not in kinds:
                continue
            hits.append(hit)
            if len(hits) == first:
                break
        return hits


def _placed(
    found: dict[str, tuple[str, dict[str, Any], dict[str, Any]]],
    layouts: dict[tuple[str, AsOf], Layout],
    as_of: AsOf,
) -> dict[str, tuple[str, dict[str, Any], dict[str, Any]]]:
    """Symbol hits with their spans as of ``as_of`` (v4 keeps them on the File's layout)."""
    out = dict(found)
    for key, (label, node, state) in found.items():
        if label == "Symbol" and needs_layout(state):
            span = layouts.get((file_key_of(key), as_of), EMPTY).span(node.get("qualname"))
            out[key] = (label, node, place_symbol(state, span))
    return out


def _hit(item: Fused, label: str, node: dict[str, Any], state: dict[str, Any]) -> SearchHit:
    kind = {"File": "file", "Requirement": "requirement", "Decision": "decision"}.get(
        label, str(state.get("kind") or "symbol")
    )
    name = str(
        node.get("name")
        or node.get("req_id")
        or node.get("decision_id")
        or node.get("path")
        or node["key"]
    )
    path = node.get("path") or state.get("path") or state.get("source_path")
    # The projection names every field: a missing one is there as None.
    line_start = state.get("line_start") or state.get("line")
    summary = (
        state.get("signature")
        or state.get("text")
        or state.get("title")
        or _first_line(state.get("docstring"))
    )
    return SearchHit(
        key=node["key"],
        label=label,
        kind=kind,
        name=name,
        qualified_name=str(state.get("qualified_name") or name),
        repo=node["repo"],
        ref=node.get("ref"),
        score=round(item.score, 6),
        matches=tuple(
            Match(retriever, rank, round(score, 6), note)
            for retriever, (rank, score, note) in item.ranks.items()
        ),
        evidence=Evidence(
            path=path,
            line_start=line_start,
            line_end=state.get("line_end") or line_start,
            commit=state.get("source_commit"),
        ),
        summary=str(summary)[:300] if summary else None,
        valid_at=_iso(state.get("valid_at")),
    )


class _Found:
    """The retrievers' rankings so far, and the label and path of every key they named."""

    def __init__(self) -> None:
        self.rankings: dict[str, list[Ranked]] = {}
        self.labels: dict[str, str] = {}
        self.paths: dict[str, str] = {}
        self.tests: set[str] = set()
        self.stubs: set[str] = set()

    def add(self, retriever: str, rows: list[dict[str, Any]]) -> None:
        self.rankings[retriever] = [Ranked(r["key"], float(r["score"])) for r in rows]
        for row in rows:
            self.labels[row["key"]] = row["label"]
            if row["path"]:
                self.paths[row["key"]] = row["path"]
            if row["test"] or in_test_folder(row["path"]):
                self.tests.add(row["key"])
            if str(row["path"] or "").endswith(STUB_SUFFIXES):
                self.stubs.add(row["key"])


def _secondary_demoted(
    fused: list[Fused], found: _Found, terms: list[str], named_files: Iterable[str]
) -> list[Fused]:
    """Tests and stubs count for less, unless the query asks for them."""
    named = list(named_files)
    # A file the query names ("testing.py") does not ask for tests by its name.
    named_words = {w for f in named for w in search_terms(f)}
    if not _TESTS.intersection(set(terms) - named_words):
        fused = demoted(fused, found.tests, TEST_WEIGHT)
    if not named and not _STUBS.intersection(terms):
        fused = demoted(fused, found.stubs, STUB_WEIGHT)
    return fused


def _fused(
    rankings: dict[str, list[Ranked]], found: _Found, terms: list[str], named_files: Iterable[str]
) -> tuple[list[Fused], list[FileScore]]:
    """The hits' fused ranking and the file ranking.

    Coverage ranks files, not what is in them: the hits are fused without it (with
    it, a file holding every word of "capture payment" outranked capture_payment)
    and say where it ranked their file; the file ranking fuses it twice, with the
    file's own document and on its own (strata.search.rollup), tests and stubs
    counting for less there too.
    """
    named = list(named_files)
    by_file = _secondary_demoted(
        rrf(rankings, weights=WEIGHTS, shared=COUNTED), found, terms, named
    )
    entities = _entities(rankings)
    if entities:  # coverage alone (a benchmark's choice): its files are the hits
        fused = _secondary_demoted(rrf(entities, weights=WEIGHTS), found, terms, named)
        _with_coverage_evidence(fused, by_file)
    else:
        fused = by_file
    covered = [Fused(r.key, r.score) for r in rankings.get("coverage", [])]
    coverage = [(f.key, f.score) for f in _secondary_demoted(covered, found, terms, named)]
    return fused, file_rollup(by_file, found.paths, coverage=coverage)


def _entities(rankings: dict[str, list[Ranked]]) -> dict[str, list[Ranked]]:
    """The rankings of entities: all but coverage's, which ranks files by their words."""
    return {r: ranked for r, ranked in rankings.items() if r not in COUNTED}


def _with_coverage_evidence(fused: list[Fused], by_file: list[Fused]) -> None:
    """Each hit fused without coverage notes the rank coverage gave it (a File's)."""
    ranks = {f.key: f.ranks["coverage"] for f in by_file if "coverage" in f.ranks}
    for entry in fused:
        if entry.key in ranks:
            entry.ranks["coverage"] = ranks[entry.key]


def in_test_folder(path: str | None) -> bool:
    """A file in a ``tests``/``testing`` folder: test code whatever its name says
    (strategies, typing examples, helpers), for ranking, not for the code graph."""
    return bool(path) and not TEST_DIRS.isdisjoint(str(path).split("/")[:-1])


class _Clock:
    """Milliseconds per stage, so a slow search says where its time went."""

    def __init__(self) -> None:
        self._last = time.perf_counter()
        self.laps: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.laps[stage] = round((now - self._last) * 1000, 2)
        self._last = now


def _timed(
    read: Callable[..., list[dict[str, Any]]], *args: Any, **kwargs: Any
) -> tuple[list[dict[str, Any]], float]:
    """``read(*args, **kwargs)`` and how long it took (ms), for the timings of a search."""
    started = time.perf_counter()
    rows = read(*args, **kwargs)
    return rows, round((time.perf_counter() - started) * 1000, 2)


def _iso(value: object) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None


def _first_line(text: object) -> str | None:
    if not text:
        return None
    return str(text).strip().splitlines()[0]

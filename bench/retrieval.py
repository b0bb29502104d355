"""Retrieval harness: does search find the code a real change touched?

Cases (tests/fixtures/retrieval/*.yaml, made by bench/retrieval_cases.py) are
real commits of click, rich and attrs: the commit's subject is the query, the
files and functions it changed (read in its parent tree) are the gold, and the
tree is the release sdist before the fix, pinned by sha256. For each tree the
bench downloads the sdist (once, into bench/.cache/retrieval), checks its
hash and the cases' gold against it, commits it into a throwaway git
repository, indexes it with the real indexer into the STRATA_* Neo4j (the dev
stack's; started if it is not running), writes and embeds its search
documents, and then asks every case of the tree through each mode:

- ``grep``: files ranked by how many query words they contain (then by count);
- ``bm25``: BM25 over the files' identifier-split words;
- ``fulltext``, ``coverage`` (files by how many query words they hold),
  ``vector``, ``hybrid`` (name + full text + coverage + vector) and
  ``hybrid+graph``: Strata's search with those retrievers.

Printed per mode: file-level Acc@1/3/5 (every gold file within the top k),
function-level Acc@5/10 (every gold function within the top k), recall@1/3/5/10
(share of gold files within the top k), hit rate (any gold file in the top 10),
junk per query (non-gold files in the top 10), and p50 latency.

    .venv/bin/python bench/retrieval.py [--trees-per-project 2] [--projects click,rich,attrs]

Targets: hybrid+graph file-level Acc@5 >= 0.85 and >= BM25 + 0.20; search
p50 <= 50 ms.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sdists  # bench/sdists.py: pinned sdists and throwaway git repositories
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from strata.code.cache import ExtractCache  # noqa: E402 - after the path set-up
from strata.code.indexer import CodeIndexer  # noqa: E402
from strata.code.languages import parse_file  # noqa: E402
from strata.devstack.neo4j import Neo4jServer  # noqa: E402
from strata.git import Git  # noqa: E402
from strata.graph import migrations  # noqa: E402
from strata.graph.gateway import Gateway  # noqa: E402
from strata.graph.reads import Reads  # noqa: E402
from strata.graph.store import FactStore  # noqa: E402
from strata.ontology import load_ontology  # noqa: E402
from strata.search.bodies import git_blob_source  # noqa: E402
from strata.search.docs import SearchIndex, local_embed  # noqa: E402
from strata.search.service import SearchService  # noqa: E402
from strata.search.text import STOP_WORDS, identifier_words  # noqa: E402
from strata.settings import load_settings  # noqa: E402

CASES = ROOT / "tests" / "fixtures" / "retrieval"
CACHE = ROOT / "bench" / ".cache" / "retrieval"
T0 = datetime(2025, 1, 1, tzinfo=UTC)
MODES = {
    "fulltext": ["fulltext"],
    "vector": ["vector"],
    "coverage": ["coverage"],
    "hybrid": ["name", "fulltext", "coverage", "vector"],
    "hybrid+graph": ["name", "fulltext", "coverage", "vector", "graph"],
}
# The baselines drop the same stop words and commit verbs as search does.
STOP = STOP_WORDS


@dataclass(slots=True)
class Case:
    id: str
    query: str
    files: list[str]
    symbols: list[str]


@dataclass(slots=True)
class Scores:
    """Per mode: one entry per case."""

    file_ranks: list[list[str]] = field(default_factory=list)
    symbol_ranks: list[list[str]] = field(default_factory=list)
    gold_files: list[list[str]] = field(default_factory=list)
    gold_symbols: list[list[str]] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


# -- trees ---------------------------------------------------------------------------


def fetch(sdist: str, sha256: str) -> Path:
    project, version = sdist.removesuffix(".tar.gz").rsplit("-", 1)
    return sdists.fetch(project, version, sha256, CACHE)


def unpack(archive: Path, root: str) -> Path:
    repo = CACHE / "trees" / root
    if (repo / ".git").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE / "trees", filter="data")
    sdists.commit_all(repo, root, T0)
    return repo


def python_files(repo: Path) -> dict[str, str]:
    out = {}
    for path in sorted(repo.rglob("*.py")):
        rel = path.relative_to(repo).as_posix()
        if not rel.startswith(".git/"):
            out[rel] = path.read_text(encoding="utf-8", errors="replace")
    return out


def check_gold(cases: list[Case], files: dict[str, str]) -> None:
    qualnames: dict[str, set[str]] = {}
    for case in cases:
        for path in case.files:
            if path not in files:
                raise SystemExit(f"{case.id}: gold file {path} is not in the tree")
        for symbol in case.symbols:
            path, _, qualname = symbol.partition("::")
            if path not in qualnames:
                extract = parse_file(path, files[path].encode())
                qualnames[path] = {s.qualname for s in extract.symbols}
            if qualname not in qualnames[path]:
                raise SystemExit(f"{case.id}: gold symbol {symbol} is not in the tree")


# -- baselines -------------------------------------------------------------------------


def words(text: str) -> list[str]:
    return [w for w in identifier_words(text) if len(w) > 2 and w not in STOP]


def grep_rank(query: str, files: dict[str, str]) -> list[str]:
    terms = set(words(query))
    scored = []
    for path, text in files.items():
        lower = text.lower()
        present = [t for t in terms if t in lower]
        if present:
            scored.append((-len(present), -sum(lower.count(t) for t in present), path))
    return [path for *_, path in sorted(scored)]


class BM25:
    """Okapi BM25 over documents of identifier-split words (k1 = 1.5, b = 0.75)."""

    def __init__(self, docs: dict[str, str]) -> None:
        self.tf = {key: Counter(words(text)) for key, text in docs.items()}
        self.length = {key: sum(c.values()) for key, c in self.tf.items()}
        self.avg = statistics.mean(self.length.values()) if self.length else 1.0
        df: Counter[str] = Counter()
        for counts in self.tf.values():
            df.update(counts.keys())
        n = len(self.tf)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def rank(self, query: str) -> list[str]:
        terms = set(words(query))
        scored = []
        for key, counts in self.tf.items():
            score = 0.0
            for term in terms:
                f = counts.get(term, 0)
                if f:
                    norm = f + 1.5 * (1 - 0.75 + 0.75 * self.length[key] / self.avg)
                    score += self.idf[term] * f * 2.5 / norm
            if score > 0:
                scored.append((-score, key))
        return [key for _, key in sorted(scored)]


def function_docs(files: dict[str, str]) -> dict[str, str]:
    out = {}
    for path, text in files.items():
        lines = text.splitlines()
        for symbol in parse_file(path, text.encode()).symbols:
            if symbol.kind in ("function", "method"):
                body = "\n".join(lines[symbol.line_start - 1 : symbol.line_end])
                out[f"{path}::{symbol.qualname}"] = f"{symbol.qualname} {body}"
    return out


# -- search ------------------------------------------------------------------------------


def search_ranks(
    service: SearchService, repo: str, query: str, use: list[str]
) -> tuple[list[str], list[str]]:
    result = service.search(query, repo, first=50, retrievers=use)
    # Files from the search's own file rollup (a file's and its symbols' fused scores).
    files = [f.path for f in result.files]
    symbols: list[str] = []
    for hit in result.hits:
        parts = hit.key.split("|")
        if hit.label == "Symbol" and len(parts) >= 4 and hit.kind in ("function", "method"):
            symbols.append(f"{parts[2]}::{parts[3]}")
    return files, symbols


# -- metrics -----------------------------------------------------------------------------


def acc(ranks: list[list[str]], gold: list[list[str]], k: int) -> float:
    return statistics.mean(set(g) <= set(r[:k]) for r, g in zip(ranks, gold, strict=True))


def recall(ranks: list[list[str]], gold: list[list[str]], k: int) -> float:
    return statistics.mean(
        len(set(g) & set(r[:k])) / len(g) for r, g in zip(ranks, gold, strict=True)
    )


def hit_rate(ranks: list[list[str]], gold: list[list[str]]) -> float:
    return statistics.mean(bool(set(g) & set(r[:10])) for r, g in zip(ranks, gold, strict=True))


def junk(ranks: list[list[str]], gold: list[list[str]]) -> float:
    return statistics.mean(len(set(r[:10]) - set(g)) for r, g in zip(ranks, gold, strict=True))


def report(scores: dict[str, Scores], cases: int, trees: list[str]) -> None:
    print(f"\n{cases} cases over {len(trees)} trees: {', '.join(trees)}")
    head = (
        "mode",
        "F@1",
        "F@3",
        "F@5",
        "fn@5",
        "fn@10",
        "R@1",
        "R@3",
        "R@5",
        "R@10",
        "hit",
        "junk",
        "p50 ms",
    )
    print(f"{head[0]:14}" + "".join(f"{h:>8}" for h in head[1:]))
    for mode, s in scores.items():
        f, g = s.file_ranks, s.gold_files
        row = [
            acc(f, g, 1),
            acc(f, g, 3),
            acc(f, g, 5),
            acc(s.symbol_ranks, s.gold_symbols, 5),
            acc(s.symbol_ranks, s.gold_symbols, 10),
            recall(f, g, 1),
            recall(f, g, 3),
            recall(f, g, 5),
            recall(f, g, 10),
            hit_rate(f, g),
        ]
        print(
            f"{mode:14}"
            + "".join(f"{v:8.3f}" for v in row)
            + f"{junk(f, g):8.2f}{statistics.median(s.seconds) * 1000:8.1f}"
        )
    if "bm25" in scores and "hybrid+graph" in scores:
        base = acc(scores["bm25"].file_ranks, scores["bm25"].gold_files, 5)
        ours = acc(scores["hybrid+graph"].file_ranks, scores["hybrid+graph"].gold_files, 5)
        print(
            f"\nhybrid+graph file Acc@5 {ours:.3f} vs BM25 {base:.3f}: "
            f"{ours - base:+.3f} (targets: >= 0.85 and >= BM25 + 0.20)"
        )


# -- main --------------------------------------------------------------------------------


def load_cases(projects: list[str]) -> dict[tuple[str, str, str], list[Case]]:
    trees: dict[tuple[str, str, str], list[Case]] = defaultdict(list)
    for project in projects:
        document = yaml.safe_load((CASES / f"{project}.yaml").read_text())
        for raw in document["cases"]:
            tree = raw["tree"]
            trees[(tree["sdist"], tree["sha256"], tree["root"])].append(
                Case(raw["id"], raw["query"], raw["gold"]["files"], raw["gold"]["symbols"])
            )
    return trees


class Rankers:
    """Every mode's ranking of one tree's files and functions for a query."""

    def __init__(self, files: dict[str, str], service: SearchService, repo: str) -> None:
        self.files = files
        self.bm25_files = BM25(files)
        self.bm25_functions = BM25(function_docs(files))
        self.service = service
        self.repo = repo

    def rank(self, mode: str, query: str) -> tuple[list[str], list[str]]:
        if mode == "grep":
            return grep_rank(query, self.files), []
        if mode == "bm25":
            return self.bm25_files.rank(query), self.bm25_functions.rank(query)
        return search_ranks(self.service, self.repo, query, MODES[mode])


def choose_trees(
    args: argparse.Namespace, projects: list[str]
) -> tuple[dict[tuple[str, str, str], list[Case]], dict[str, str]]:
    """The trees to run (the ones with most cases first) and each tree's group."""
    held_out = {p.strip() for p in args.holdout.split(",") if p.strip()}
    chosen: dict[tuple[str, str, str], list[Case]] = {}
    group_of: dict[str, str] = {}  # tree root -> "tuned" | "held-out"
    for project in projects:
        trees = load_cases([project])
        ordered = sorted(trees.items(), key=lambda kv: -len(kv[1]))
        keep = ordered if args.trees_per_project == 0 else ordered[: args.trees_per_project]
        chosen.update(keep)
        for (_, _, root), _ in keep:
            group_of[root] = "held-out" if project in held_out else "tuned"
    return chosen, group_of


def ask(
    rankers: Rankers, cases: list[Case], modes: list[str], into: list[dict[str, Scores]]
) -> list[dict[str, Any]]:
    """Every case through every mode, scored into each of ``into``; the ranks per case."""
    per_case: list[dict[str, Any]] = []
    for case in cases:
        ranks: dict[str, Any] = {}
        for mode in modes:
            started = time.perf_counter()
            ranked, fns = rankers.rank(mode, case.query)
            seconds = time.perf_counter() - started
            for scores in into:
                s = scores[mode]
                s.seconds.append(seconds)
                s.file_ranks.append(ranked)
                s.symbol_ranks.append(fns)
                s.gold_files.append(case.files)
                s.gold_symbols.append(case.symbols)
            gold = {f: ranked.index(f) + 1 if f in ranked else None for f in case.files}
            ranks[mode] = {"gold": gold, "top": ranked[:10]}
        per_case.append({"id": case.id, "query": case.query, "ranks": ranks})
    return per_case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--projects", default="click,rich,attrs")
    parser.add_argument(
        "--trees-per-project",
        type=int,
        default=2,
        help="the trees with the most cases, per project (0: all)",
    )
    parser.add_argument("--no-vector", action="store_true", help="skip embedding and vectors")
    parser.add_argument(
        "--misses",
        type=Path,
        metavar="FILE",
        help="write, per case and mode, the gold files' ranks and the top 10 (YAML)",
    )
    parser.add_argument(
        "--holdout",
        default="attrs",
        help="projects whose cases no setting was tuned on, reported apart (comma-joined)",
    )
    args = parser.parse_args()
    projects = [p.strip() for p in args.projects.split(",") if p.strip()]
    chosen, group_of = choose_trees(args, projects)
    settings = load_settings()
    server = Neo4jServer.from_settings(settings)
    if not server.running():
        server.start()
    ontology = load_ontology(settings.ontology_dir)
    modes = ["grep", "bm25", *(m for m in MODES if not (args.no_vector and "vector" in MODES[m]))]
    groups = {g: {mode: Scores() for mode in modes} for g in ("all", "tuned", "held-out")}
    with Gateway.connect(settings) as gateway:
        migrations.migrate(gateway, settings.migrations_dir)
        indexer = CodeIndexer(
            FactStore(gateway, ontology),
            Reads(gateway, ontology),
            cache=ExtractCache(CACHE / "extracts"),
        )
        trees: dict[str, Path] = {}  # repository name -> its throwaway git repository
        per_case: list[dict[str, Any]] = []  # for --misses
        index = SearchIndex(
            gateway,
            None if args.no_vector else local_embed(),
            blobs=git_blob_source(trees.get),
        )
        service = SearchService(gateway, index, embed_per_search=0)
        for (sdist, sha256, root), cases in chosen.items():
            repo_dir = unpack(fetch(sdist, sha256), root)
            files = python_files(repo_dir)
            check_gold(cases, files)
            name = "rt-" + re.sub(r"[^A-Za-z0-9._-]", "-", root)
            trees[name] = repo_dir
            head = subprocess.run(
                ["git", "-C", str(repo_dir), "rev-parse", "HEAD"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
            started = time.perf_counter()
            indexer.index(Git(repo_dir), name, "main", head)
            seconds = time.perf_counter() - started
            synced = index.sync(name, embed_budget=0)
            embedded, _, embed_s = index.embed_pending(name, budget=None)
            print(
                f"[retrieval] {root}: {len(files)} files indexed in {seconds:.1f} s, "
                f"{synced.documents} documents, {embedded} embedded in {embed_s:.1f} s, "
                f"{len(cases)} cases",
                flush=True,
            )
            rankers = Rankers(files, service, name)
            per_case += ask(rankers, cases, modes, [groups["all"], groups[group_of[root]]])
    if args.misses is not None:
        args.misses.write_text(yaml.safe_dump(per_case, sort_keys=False, width=120))
        print(f"[retrieval] ranks of {len(per_case)} cases written to {args.misses}")
    for group, scores in groups.items():
        roots = [root for _, _, root in chosen if group in ("all", group_of[root])]
        if roots:
            count = len(next(iter(scores.values())).seconds)
            print(f"\n== {group} ==", end="")
            report(scores, count, roots)


if __name__ == "__main__":
    main()

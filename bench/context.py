"""Benchmark of context packs on the real Neo4j: latency per task on an indexed repository.

The repository must be indexed first (e.g. ``strata index . --repo strata-self --commits 3``).
Runs ~20 tasks over every intent, each once after one warm-up pack, and prints p50 / p90
latency, tokens used against the budget, and how many packs the gate found sufficient.
The built-in tasks name this repository's code; ``--tasks FILE`` (one task per line)
runs tasks written for another one, e.g. ``bench/context_django.txt`` for Django.

    .venv/bin/python bench/context.py [--repo strata-self] [--budget 500] [--source .]
    .venv/bin/python bench/context.py --repo django --source DJANGO_GIT_DIR \
        --tasks bench/context_django.txt

Target (2 cores): p50 <= 500 ms for a 500-token pack.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from strata.context.builder import ContextBuilder
from strata.context.sources import git_blobs
from strata.graph.gateway import Gateway
from strata.ontology import load_ontology
from strata.search.bodies import git_blob_source
from strata.search.docs import SearchIndex, embedder_for
from strata.search.service import SearchService
from strata.settings import load_settings

TASKS = [
    "explain `ContextBuilder.build`",
    "explain SearchService.search",
    "who calls CodeReads.impact?",
    "what breaks if I change `as_of_predicate`",
    "impact of changing `check_query`",
    "which tests cover `rrf`?",
    "tests for FactStore.write",
    "is `check_budget` tested?",
    "entrypoints that reach `CodeIndexer.index`",
    "which cli commands end up in `SearchService.search`",
    "trace the flow of `fit` step by step",
    "how does `CodeReads._walk` work step by step",
    "trace the flow of `classify`",
    "what changed recently",
    "what changed in src/strata/context/outline.py",
    "what changed since 2026-01-01",
    "REQ-001",
    "explain how webhooks are verified",
    "explain the reciprocal rank fusion",
    "how are api keys checked",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default="strata-self")
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--source", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--tasks", type=Path, help="one task per line (default: built in)")
    args = parser.parse_args()
    tasks = TASKS
    if args.tasks is not None:
        tasks = [t.strip() for t in args.tasks.read_text().splitlines() if t.strip()]
    settings = load_settings()
    with Gateway.connect(settings) as gateway:
        index = SearchIndex(
            gateway, embedder_for(settings), blobs=git_blob_source(lambda _: args.source)
        )
        synced = index.sync(args.repo, embed_budget=0)  # documents first, outside the timing
        print(f"{synced.documents} search documents written in {synced.write_s:.1f} s")
        # Steady state: no embedding inside a pack (a search would embed up to 16 documents).
        search = SearchService(gateway, index, embed_per_search=0)
        builder = ContextBuilder(
            gateway, load_ontology(settings.ontology_dir), search, git_blobs(lambda _: args.source)
        )
        builder.build(tasks[0], args.repo, budget_tokens=args.budget)  # warm: tokenizer, caches
        times, tokens, sufficient = [], [], 0
        for task in tasks:
            start = time.perf_counter()
            pack = builder.build(task, args.repo, budget_tokens=args.budget)
            ms = (time.perf_counter() - start) * 1000
            times.append(ms)
            tokens.append(pack.tokens)
            sufficient += pack.sufficient
            verdict = "ok " if pack.sufficient else "gap"
            print(f"{ms:8.1f} ms  {pack.tokens:4d} tok  {verdict} {pack.intent:17s} {task}")
    times.sort()
    print(
        f"\n{len(tasks)} packs: p50 {statistics.median(times):.1f} ms, "
        f"p90 {times[int(len(times) * 0.9) - 1]:.1f} ms, max {times[-1]:.1f} ms; "
        f"tokens median {statistics.median(tokens):.0f}/{args.budget} (max {max(tokens)}); "
        f"sufficient {sufficient}/{len(tasks)}"
    )


if __name__ == "__main__":
    main()

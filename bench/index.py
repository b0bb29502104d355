"""Benchmark of the code layer: index a real 100k+ line repository into the real Neo4j.

The repository is the ``django/`` package of Django 5.1.4's source distribution
from PyPI (about 155k lines of Python and 27k of JavaScript; the vendored
admin JavaScript is skipped as vendored), checked against its sha256 and
committed into a throwaway git repository. The same run then changes one file,
commits, and reindexes incrementally.

    .venv/bin/python bench/index.py            # uses the STRATA_* Neo4j (dev stack)

Prints: lines/s and facts/s end to end, wall time per phase, peak RSS, and the
one-file reindex time with its ratio to the full index. Targets (2 cores):
>= 15k lines/s; one-file reindex <= 300 ms and <= 5% of the full index;
peak RSS <= 1 GB.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tarfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import sdists  # bench/sdists.py: pinned sdists and throwaway git repositories
from sdists import git

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer, IndexResult
from strata.code.reads import CodeReads
from strata.devstack.neo4j import Neo4jServer
from strata.git import Git
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import load_ontology
from strata.settings import load_settings
from strata.temporal import AsOf

ROUNDS = 5
SDIST = "Django-5.1.4.tar.gz"
SDIST_SHA256 = "de450c09e91879fa5a307f696e57c851955c910a438a35e6b4c895e86bedc82a"
CACHE = Path(__file__).resolve().parent / ".cache"
T0 = datetime(2024, 12, 4, tzinfo=UTC)


def fetch_sdist() -> Path:
    """The pinned sdist from the package index (downloaded once), hash checked."""
    return sdists.fetch("django", "5.1.4", SDIST_SHA256, CACHE)


def make_repo(sdist: Path) -> Path:
    repo = CACHE / "django-repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("Django-5.1.4/django/")]
        tar.extractall(CACHE / "extract", members=members, filter="data")
    shutil.move(str(CACHE / "extract" / "Django-5.1.4" / "django"), str(repo / "django"))
    shutil.rmtree(CACHE / "extract")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "django 5.1.4", when=T0)
    return repo


def one_file_change(repo: Path, round_no: int) -> str:
    """Append a function that calls existing ones to django/utils/text.py and commit."""
    target = repo / "django" / "utils" / "text.py"
    with target.open("a") as handle:
        handle.write(
            f"\n\ndef bench_slug_{round_no}(value):\n    return slugify(capfirst(value))\n"
        )
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-q",
        "-m",
        f"add bench_slug_{round_no}",
        when=T0 + timedelta(days=1 + round_no),
    )
    return git(repo, "rev-parse", "HEAD")


def peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def show(label: str, result: IndexResult) -> None:
    seconds = result.seconds["total"]
    print(
        f"{label}: {result.mode}, {result.files_written}/{result.files_total} files, "
        f"{result.lines:,} lines, {result.symbols:,} symbols, "
        f"{result.calls_resolved:,} resolved calls, {result.calls_unresolved:,} unresolved, "
        f"{result.facts:,} facts ({result.created:,} created, {result.closed:,} closed) "
        f"in {seconds:.2f}s"
    )
    phases = ", ".join(f"{k} {v:.2f}s" for k, v in result.seconds.items() if k != "total")
    print(f"  phases: {phases}")
    if result.skipped:
        print(f"  skipped: {result.skipped}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the indexed data")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    settings = load_settings()
    server = Neo4jServer.from_settings(settings)
    if settings.neo4j_uri == server.uri:
        server.start()
    repo_path = make_repo(fetch_sdist())
    name = f"bench-django-{uuid.uuid4().hex[:6]}"
    ontology = load_ontology(settings.ontology_dir)
    with Gateway.connect(settings) as gateway:
        migrations.migrate(gateway, settings.migrations_dir)
        cache_dir = CACHE / f"extracts-{name}"
        indexer = CodeIndexer(
            FactStore(gateway, ontology),
            Reads(gateway, ontology),
            cache=ExtractCache(cache_dir),
            max_file_bytes=settings.max_file_bytes,
            workers=args.workers,
        )
        try:
            head = git(repo_path, "rev-parse", "HEAD")
            full = indexer.index(Git(repo_path), name, "main", head)
            show("full index", full)
            seconds = full.seconds["total"]
            print(
                f"end to end: {full.lines / seconds:,.0f} lines/s, "
                f"{full.facts / seconds:,.0f} facts/s, wall {seconds:.1f}s, "
                f"peak RSS {peak_rss_mb():,.0f} MB"
            )

            walls = []
            for round_no in range(ROUNDS):
                changed = one_file_change(repo_path, round_no)
                started = time.perf_counter()
                incremental = indexer.index(Git(repo_path), name, "main", changed)
                walls.append(time.perf_counter() - started)
            show("one-file reindex (last)", incremental)
            wall = statistics.median(walls)
            print(
                f"one-file reindex: median {wall * 1000:.0f} ms of {ROUNDS} "
                f"(min {min(walls) * 1000:.0f}, max {max(walls) * 1000:.0f}), "
                f"{wall / seconds:.2%} of the full index"
            )

            again = time.perf_counter()
            repeat = indexer.index(Git(repo_path), name, "main", changed)
            again_ms = (time.perf_counter() - again) * 1000
            print(f"same commit again: {repeat.mode} in {again_ms:.0f} ms")

            code = CodeReads(gateway, ontology)
            slug = ontology.node("Symbol").make_key(
                {"repo": name, "ref": "main", "path": "django/utils/text.py", "qualname": "slugify"}
            )
            callers = code.callers(slug, AsOf.at(), depth=1, first=200)
            print(
                f"sanity: django.utils.text.slugify has {len(callers)} direct callers, e.g. "
                + ", ".join(h.qualified_name for h in callers[:3])
            )
            print(
                "targets: >= 15k lines/s: "
                + ("met" if full.lines / seconds >= 15_000 else "NOT met")
                + f"; one-file <= 300 ms: {'met' if wall <= 0.3 else 'NOT met'}"
                + f"; <= 5% of full: {'met' if wall / seconds <= 0.05 else 'NOT met'}"
                + f"; peak RSS <= 1 GB: {'met' if peak_rss_mb() <= 1024 else 'NOT met'}"
            )
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
            if not args.keep:
                for label in (
                    "Symbol",
                    "File",
                    "Module",
                    "Package",
                    "Branch",
                    "Commit",
                    "Repository",
                ):
                    gateway.run_autocommit(
                        f"MATCH (n:{label} {{repo: $repo}}) "
                        "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS",
                        repo=name,
                        timeout=3600,
                    )


if __name__ == "__main__":
    main()

"""Benchmark of the knowledge and trace layers on the real Neo4j.

1. Requirements ingested per second, end to end: 5,000 ``REQ-####`` atoms in
   markdown files of a throwaway git repository, parsed, classified and written
   by the knowledge sync.
2. Settle time after a push that touches 100 linked symbols: 100 requirements
   each implemented by one function (declared in ``trace/``), then a commit
   that renames all 100 functions; the trace sync that marks them STALE is timed.

    .venv/bin/python bench/knowledge.py [--requirements 5000] [--linked 100]

Targets (2 cores): >= 1,000 requirements/s; settle <= 1 s.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.devstack.neo4j import Neo4jServer
from strata.git import Git
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.knowledge.sync import KnowledgeSync
from strata.ontology import Ontology, load_ontology
from strata.settings import load_settings
from strata.trace.sync import TraceSync
from tests.gitrepo import GitRepo

T0 = datetime(2025, 1, 1, tzinfo=UTC)
PATTERNS = (
    "The service shall record event {n}.",
    "When a push {n} arrives, the service shall reindex the repository.",
    "While Neo4j is down, the API shall answer 503 to request {n}.",
    "If signature {n} is wrong, then the service shall answer 401.",
    "Where feature {n} is enabled, the API shall expose it.",
)


def requirements_file(start: int, count: int) -> str:
    lines = ["# Requirements", ""]
    for n in range(start, start + count):
        lines.append(f"- [ ] REQ-{n:04d}: {PATTERNS[n % len(PATTERNS)].format(n=n)}")
    return "\n".join(lines) + "\n"


def drop(gateway: Gateway, repo: str) -> None:
    for label in (
        "Symbol",
        "File",
        "Module",
        "Package",
        "Branch",
        "Commit",
        "Repository",
        "Requirement",
        "Decision",
    ):
        gateway.run_autocommit(
            f"MATCH (n:{label} {{repo: $repo}}) "
            "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
            repo=repo,
            timeout=3600,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requirements", type=int, default=5000)
    parser.add_argument("--linked", type=int, default=100)
    args = parser.parse_args()
    settings = load_settings()
    server = Neo4jServer.from_settings(settings)
    if settings.neo4j_uri == server.uri:
        server.start()
    ontology = load_ontology(settings.ontology_dir)
    work = Path(tempfile.mkdtemp(prefix="strata-bench-"))
    names = [f"bench-req-{uuid.uuid4().hex[:6]}", f"bench-settle-{uuid.uuid4().hex[:6]}"]
    with Gateway.connect(settings) as gateway:
        migrations.migrate(gateway, settings.migrations_dir)
        store = FactStore(gateway, ontology)
        try:
            rate = requirements_rate(gateway, store, work, names[0], args.requirements)
            settle = settle_time(gateway, store, ontology, work, name=names[1], n=args.linked)
            print(
                "targets: >= 1,000 requirements/s: "
                + ("met" if rate >= 1000 else "NOT met")
                + f"; settle <= 1 s: {'met' if settle <= 1 else 'NOT met'}"
            )
        finally:
            for name in names:
                drop(gateway, name)
            shutil.rmtree(work, ignore_errors=True)


def requirements_rate(
    gateway: Gateway, store: FactStore, work: Path, name: str, count: int
) -> float:
    """Requirements per second through the knowledge sync, end to end."""
    repo = GitRepo(work / "reqs")
    per_file = 500
    for start in range(0, count, per_file):
        repo.write(
            f"docs/requirements/part-{start // per_file:03d}.md",
            requirements_file(start, min(per_file, count - start)),
        )
    sha = repo.commit("requirements", T0)
    started = time.perf_counter()
    result = KnowledgeSync(store, gateway).sync(Git(repo.path), name, sha)
    seconds = time.perf_counter() - started
    rate = result.requirements / seconds
    print(
        f"requirements: {result.requirements:,} in {seconds:.2f}s = {rate:,.0f}/s "
        f"({result.facts:,} facts, {len(result.findings)} findings)"
    )
    return rate


def settle_time(
    gateway: Gateway, store: FactStore, ontology: Ontology, work: Path, *, name: str, n: int
) -> float:
    """Seconds of the trace sync after a push that renames ``n`` linked functions."""
    repo = GitRepo(work / "settle")
    repo.write("docs/req.md", requirements_file(0, n))
    repo.write("app/__init__.py", "")
    repo.write(
        "app/feature.py",
        "".join(f"def feature_{i}(x):\n    return x + {i}\n\n\n" for i in range(n)),
    )
    first = repo.commit("features", T0)
    repo.write(
        "trace/features.yml",
        "links:\n"
        + "".join(
            f"  - requirement: REQ-{i:04d}\n    target: app.feature.feature_{i}\n"
            f"    kind: implemented_by\n    status: PROPOSED\n    commit: {first}\n"
            for i in range(n)
        ),
    )
    second = repo.commit("trace", T0 + timedelta(days=1))
    repo.write(
        "app/feature.py",
        "".join(f"def renamed_{i}(x):\n    return x + {i}\n\n\n" for i in range(n)),
    )
    third = repo.commit("rename", T0 + timedelta(days=2))
    git = Git(repo.path)
    indexer = CodeIndexer(store, Reads(gateway, ontology), cache=ExtractCache(work / "cache"))
    trace = TraceSync(store, gateway)
    previous = None
    for sha in (first, second):
        code = indexer.index(git, name, "main", sha)
        KnowledgeSync(store, gateway).sync(git, name, sha)
        trace.sync(git, name, "main", sha, base=previous, changed_symbols=code.changed_symbols)
        previous = sha
    code = indexer.index(git, name, "main", third)
    started = time.perf_counter()
    settled = trace.sync(
        git, name, "main", third, base=second, changed_symbols=code.changed_symbols
    )
    settle = time.perf_counter() - started
    print(
        f"settle after a push touching {len(code.changed_symbols)} symbols "
        f"({settled.declared} linked): {settled.stale} links STALE in {settle:.2f}s"
    )
    return settle


if __name__ == "__main__":
    main()

"""Facts written for a one-line insertion at the top of a big file, under ontology v3 and v4.

Position is not content (ontology v4, issue 11 item 4): a line inserted at the top of a
file should open one new version (the File's), not one per symbol and edge below it.
This bench commits a subtree of the pinned Django 5.2.8 sdist into a throwaway git
repository, then a second commit with one line inserted at the top of one big file,
and indexes both commits (full, then incremental) once under each ontology version.
It prints, per version, the files and symbols the incremental run re-synced, the fact
versions it created, and how long it took; then the ratio.

    .venv/bin/python bench/positions.py            # django/db, django/db/models/base.py
    .venv/bin/python bench/positions.py --subtree django/db/models --file django/db/models/query.py

It uses the Neo4j named by the STRATA_* settings (the local dev stack by default;
started if it is not running) and deletes its own repositories' nodes afterwards.
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import sdists  # bench/sdists.py: pinned sdists and throwaway git repositories

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer, IndexResult
from strata.devstack.neo4j import Neo4jServer
from strata.git import Git
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import load_ontology
from strata.settings import load_settings

SDIST_SHA256 = "23254866a5bb9a2cfa6004e8b809ec6246eba4b58a7589bc2772f1bcc8456c7f"
T0 = datetime(2025, 11, 5, tzinfo=UTC)
T1 = datetime(2025, 11, 6, tzinfo=UTC)
# The versions the insertion opened, split by where they come from: the changed file
# itself, or the other files the incremental run re-resolved (its dependents).
NEW_VERSIONS = """
MATCH (a)-[r]->(b)
WHERE r.repo = $repo AND r.valid_at = datetime($at) AND r.expired_at IS NULL
RETURN type(r) AS type, labels(a)[0] AS label, coalesce(r.source_path = $path, false) AS own,
       count(*) AS n
ORDER BY own DESC, n DESC
"""
LABELS = ("Symbol", "File", "Module", "Package", "Branch", "Commit", "Repository")


def make_repo(workdir: Path, subtree: str, changed: str) -> tuple[Path, list[str]]:
    """The subtree committed at T0, then with one line inserted at the top of ``changed``."""
    archive = sdists.fetch("django", "5.2.8", SDIST_SHA256)
    repo = workdir / "repo"
    prefix = "django-5.2.8/"
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix + subtree + "/")]
        for member in members:
            member.name = member.name[len(prefix) :]
        tar.extractall(repo, members=members, filter="data")
    target = repo / changed
    if not target.is_file():
        raise SystemExit(f"{changed} is not inside {subtree}")
    shas = [sdists.commit_all(repo, "django subtree", T0)]
    target.write_text("# one line inserted at the top\n" + target.read_text())
    shas.append(sdists.commit_all(repo, "insert a line at the top", T1))
    return repo, shas


def run(
    gateway: Gateway, version: int, repo: Path, shas: list[str], workdir: Path, *, changed: str
) -> tuple[IndexResult, int]:
    """Index both commits under ontology ``version``: the incremental run, and how many
    versions it opened from the changed file itself."""
    settings = load_settings()
    ontology = load_ontology(settings.ontology_dir, version)
    indexer = CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(workdir / f"cache-v{version}"),
    )
    name = f"bench-positions-v{version}-{uuid.uuid4().hex[:8]}"
    try:
        indexer.index(Git(repo), name, "main", shas[0])
        shifted = indexer.index(Git(repo), name, "main", shas[1])
        rows = gateway.read(NEW_VERSIONS, repo=name, at=T1.isoformat(), path=changed)
        for own, title in ((True, changed), (False, "other files")):
            found = [f"{r['type']} {r['label']} {r['n']}" for r in rows if r["own"] is own]
            print(f"  v{version} new versions from {title}: {', '.join(found) or 'none'}")
    finally:
        cleanup(gateway, name)
    return shifted, sum(int(r["n"]) for r in rows if r["own"])


def cleanup(gateway: Gateway, repo: str) -> None:
    """Remove the benchmark's own repository (bench data only)."""
    for label in LABELS:
        gateway.run_autocommit(
            f"MATCH (n:{label} {{repo: $repo}}) CALL (n) {{ DETACH DELETE n }} "
            "IN TRANSACTIONS OF 1000 ROWS",
            repo=repo,
            timeout=3600,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subtree", default="django/db")
    parser.add_argument("--file", default="django/db/models/base.py")
    args = parser.parse_args()
    settings = load_settings()
    server = Neo4jServer.from_settings(settings)
    if settings.neo4j_uri == server.uri:
        server.start()
    newest = load_ontology(settings.ontology_dir).version
    with (
        tempfile.TemporaryDirectory(prefix="strata-positions-") as tmp,
        Gateway.connect(settings) as gateway,
    ):
        migrations.migrate(gateway, settings.migrations_dir)
        workdir = Path(tmp)
        repo, shas = make_repo(workdir, args.subtree, args.file)
        lines = len((repo / args.file).read_text().splitlines())
        print(f"{args.subtree}: one line inserted at the top of {args.file} ({lines:,} lines)")
        print(
            f"{'ontology':>8} {'files':>6} {'symbols':>8} {'facts':>7} {'created':>8} "
            f"{'unchanged':>9} {'closed':>7} {'seconds':>8}"
        )
        created: dict[int, int] = {}
        own: dict[int, int] = {}
        for version in (3, newest):
            shifted, own[version] = run(gateway, version, repo, shas, workdir, changed=args.file)
            created[version] = shifted.created
            print(
                f"{'v' + str(version):>8} {shifted.files_written:>6} {shifted.symbols:>8,} "
                f"{shifted.facts:>7,} {shifted.created:>8,} {shifted.unchanged:>9,} "
                f"{shifted.closed:>7,} {shifted.seconds.get('total', 0):>8.2f}"
            )
        ratio = created[3] / max(1, created[newest])
        print(f"new versions from {args.file} itself: v3 {own[3]:,}, v{newest} {own[newest]:,}")
        print(
            f"new versions in all (Branch, Commit, re-resolved dependents): v3 {created[3]:,}, "
            f"v{newest} {created[newest]:,} ({ratio:.0f}x fewer)"
        )


if __name__ == "__main__":
    main()

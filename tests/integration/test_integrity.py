"""The integrity checker on the real Neo4j: an indexed history passes, a duplicated
open version and an overlapping version are each reported, and the CLI says so."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strata.cli import console as cli_console
from strata.cli.main import app
from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.integrity import check_repository
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology, load_ontology
from strata.settings import Settings
from tests.conftest import settings_env
from tests.gitrepo import GitRepo

C1 = datetime(2025, 6, 1, tzinfo=UTC)
C2 = datetime(2025, 6, 2, tzinfo=UTC)

# Copy one open version of a slot, as a writer that lost its lock would.
DUPLICATE_OPEN = """
MATCH (a)-[r:{rel}]->(b)
WHERE r.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL
WITH a, r, b LIMIT 1
CREATE (a)-[copy:{rel}]->(b) SET copy = properties(r)
RETURN a.key AS src, b.key AS dst
"""

# A closed version that reaches into the open one's valid time.
OVERLAPPING = """
MATCH (n)-[r:STATE]->(n)
WHERE r.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL
WITH n, r LIMIT 1
CREATE (n)-[copy:STATE]->(n)
SET copy = properties(r), copy.invalid_at = r.valid_at + duration('P1D')
RETURN n.key AS key
"""


@pytest.fixture(scope="module")
def ontology(settings: Settings) -> Ontology:
    return load_ontology(settings.ontology_dir)


def _indexed(gateway: Gateway, ontology: Ontology, tmp_path: Path, name: str) -> None:
    """Two commits of a small package indexed: closed and open versions both exist."""
    repo = GitRepo(tmp_path / name)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/a.py", "def f(x):\n    return g(x)\n\n\ndef g(x):\n    return x\n")
    repo.write("pkg/b.py", "from pkg.a import f\n\n\ndef main():\n    return f(1)\n")
    first = repo.commit("one", C1)
    repo.write("pkg/a.py", "def f(x):\n    return g(x) + 1\n\n\ndef g(x):\n    return x\n")
    second = repo.commit("two", C2)
    indexer = CodeIndexer(
        FactStore(gateway, ontology), Reads(gateway, ontology), cache=ExtractCache(tmp_path / "c")
    )
    for sha in (first, second):
        indexer.index(Git(repo.path), name, "main", sha)


class TestCheckRepository:
    """Every fact type of a repository is checked; only real violations are reported."""

    def test_an_indexed_history_has_one_timeline_per_slot(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
    ) -> None:
        name = f"integrity-ok-{unique}"
        _indexed(gateway, ontology, tmp_path, name)
        report = check_repository(gateway, ontology, name)
        assert report.ok, [v.describe() for v in report.violations]
        assert {"STATE", "DEFINES", "CALLS"} <= set(report.slots)
        # The edit closed versions, so some slots hold history that must not count.
        assert report.versions["STATE"] > report.slots["STATE"]

    def test_a_duplicated_open_edge_version_is_reported(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
    ) -> None:
        name = f"integrity-dup-{unique}"
        _indexed(gateway, ontology, tmp_path, name)
        [copied] = gateway.write(DUPLICATE_OPEN.format(rel="CALLS"), repo=name)
        report = check_repository(gateway, ontology, name)
        assert not report.ok
        [violation] = report.violations
        assert (violation.rel, violation.src, violation.dst) == (
            "CALLS",
            copied["src"],
            copied["dst"],
        )
        assert violation.open == 2
        assert report.duplicates == 1

    def test_an_overlapping_closed_state_version_is_reported(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
    ) -> None:
        name = f"integrity-overlap-{unique}"
        _indexed(gateway, ontology, tmp_path, name)
        [copied] = gateway.write(OVERLAPPING, repo=name)
        report = check_repository(gateway, ontology, name)
        [violation] = report.violations
        assert (violation.rel, violation.src) == ("STATE", copied["key"])
        assert violation.open == 1  # one open version: only the overlap is wrong
        assert violation.overlaps == 1
        assert (report.duplicates, report.overlapping) == (0, 1)

    def test_another_repository_is_not_affected(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
    ) -> None:
        _indexed(gateway, ontology, tmp_path, f"integrity-a-{unique}")
        _indexed(gateway, ontology, tmp_path, f"integrity-b-{unique}")
        gateway.write(DUPLICATE_OPEN.format(rel="DEFINES"), repo=f"integrity-a-{unique}")
        assert check_repository(gateway, ontology, f"integrity-b-{unique}").ok
        assert not check_repository(gateway, ontology, f"integrity-a-{unique}").ok


class TestCli:
    """`strata check-integrity --repo NAME` exits 0 on a sound graph, 1 otherwise."""

    def test_exit_codes(
        self,
        gateway: Gateway,
        ontology: Ontology,
        settings: Settings,
        tmp_path: Path,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        name = f"integrity-cli-{unique}"
        _indexed(gateway, ontology, tmp_path, name)
        for key, value in settings_env(settings).items():
            monkeypatch.setenv(key, value)
        cli_console.settings.cache_clear()
        runner = CliRunner()
        try:
            good = runner.invoke(app, ["check-integrity", "--repo", name])
            assert good.exit_code == 0, good.output
            assert "one timeline each" in good.output
            gateway.write(DUPLICATE_OPEN.format(rel="CALLS"), repo=name)
            bad = runner.invoke(app, ["check-integrity", "--repo", name])
            assert bad.exit_code == 1, bad.output
            assert "1 slot(s) with several open versions" in " ".join(bad.output.split())
            empty = runner.invoke(app, ["check-integrity", "--repo", f"none-{unique}"])
            assert empty.exit_code == 1
        finally:
            cli_console.settings.cache_clear()

"""`strata trace check`: the CI gate over the real graph, synced in-process."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strata.cli import console
from strata.cli.main import app
from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.knowledge.sync import KnowledgeSync
from strata.ontology import load_ontology
from strata.settings import Settings
from strata.trace.sync import TraceSync
from tests.conftest import settings_env
from tests.gitrepo import GitRepo

WHEN = datetime(2025, 5, 1, tzinfo=UTC)


def build(tmp_path: Path, gateway: Gateway, settings: Settings, name: str) -> GitRepo:
    repo = GitRepo(tmp_path / "gate")
    repo.write(
        "docs/req.md",
        "REQ-101: The shop shall save orders.\nREQ-102: The shop shall print receipts.\n",
    )
    repo.write("app/orders.py", "def save():\n    return 1\n")
    repo.write(
        "tests/test_orders.py",
        "from app.orders import save\n\n\ndef test_save_req_101():\n    assert save()\n",
    )
    first = repo.commit("code", WHEN)
    repo.write(
        "trace/orders.yml",
        f"links:\n  - requirement: REQ-101\n    target: app.orders.save\n"
        f"    kind: implemented_by\n    status: PROPOSED\n    commit: {first}\n",
    )
    second = repo.commit("trace", WHEN.replace(day=2))
    ontology = load_ontology(settings.ontology_dir)
    store = FactStore(gateway, ontology)
    indexer = CodeIndexer(store, Reads(gateway, ontology), cache=ExtractCache(tmp_path / "c"))
    git = Git(repo.path)
    for sha in (first, second):
        indexer.index(git, name, "main", sha)
        KnowledgeSync(store, gateway).sync(git, name, sha)
        TraceSync(store, gateway).sync(git, name, "main", sha)
    return repo


class TestGate:
    """The gate passes a covered requirement and fails an uncovered one, with the reason."""

    def test_gate(
        self,
        tmp_path: Path,
        gateway: Gateway,
        settings: Settings,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        name = f"gate-{unique}"
        repo = build(tmp_path, gateway, settings, name)
        for key, value in settings_env(settings).items():
            monkeypatch.setenv(key, value)
        console.settings.cache_clear()
        runner = CliRunner()
        covered = tmp_path / "covered.yml"
        covered.write_text("requirements: [REQ-101]\npaths: ['app/**', 'trace/**']\n")
        ok = runner.invoke(app, ["trace", "check", "--repo", name, "--scope", str(covered)])
        assert ok.exit_code == 0, ok.output
        assert "trace check passed" in ok.output

        everything = runner.invoke(app, ["trace", "check", "--repo", name])
        assert everything.exit_code == 1
        assert "REQ-102" in everything.output
        assert "no implementation" in everything.output

        narrow = tmp_path / "narrow.yml"
        narrow.write_text("requirements: [REQ-101]\npaths: ['trace/**']\n")
        outside = runner.invoke(
            app,
            [
                "trace",
                "check",
                "--repo",
                name,
                "--scope",
                str(narrow),
                "--base",
                "HEAD~1",
                "--path",
                str(repo.path),
            ],
        )
        assert outside.exit_code == 0, outside.output  # HEAD~1..HEAD only touched trace/

        code_only = tmp_path / "code.yml"
        code_only.write_text("requirements: [REQ-101]\npaths: ['app/**']\n")
        wrong = runner.invoke(
            app,
            [
                "trace",
                "check",
                "--repo",
                name,
                "--scope",
                str(code_only),
                "--base",
                "HEAD~1",
                "--path",
                str(repo.path),
            ],
        )
        assert wrong.exit_code == 1
        assert "trace/orders.yml" in wrong.output
        console.settings.cache_clear()

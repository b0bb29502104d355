"""`strata trace check` refuses to pass when it is misconfigured or a trace file was refused."""

from __future__ import annotations

from collections.abc import Iterator
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
from tests.integration.trace.test_gate import WHEN, build


@pytest.fixture
def cli(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    for key, value in settings_env(settings).items():
        monkeypatch.setenv(key, value)
    console.settings.cache_clear()
    yield CliRunner()
    console.settings.cache_clear()


def scope(tmp_path: Path, text: str) -> str:
    path = tmp_path / f"scope-{abs(hash(text))}.yml"
    path.write_text(text)
    return str(path)


class TestMisconfiguredGate:
    """An unknown repository, undeclared or malformed ids and an empty scope exit 2."""

    def test_each_misconfiguration(
        self, cli: CliRunner, tmp_path: Path, gateway: Gateway, settings: Settings, unique: str
    ) -> None:
        name = f"gatecfg-{unique}"
        build(tmp_path, gateway, settings, name)
        cases = {
            "no-such-repository": (["--repo", f"missing-{unique}"], "declares no requirements"),
            "undeclared id": (
                ["--repo", name, "--scope", scope(tmp_path, "requirements: [REQ-999]\n")],
                "REQ-999",
            ),
            "malformed id": (
                ["--repo", name, "--scope", scope(tmp_path, "requirements: [req-1]\n")],
                "malformed requirement id",
            ),
            "empty list": (
                ["--repo", name, "--scope", scope(tmp_path, "requirements: []\n")],
                "empty",
            ),
            "empty file": (["--repo", name, "--scope", scope(tmp_path, "{}\n")], "empty"),
        }
        for case, (args, message) in cases.items():
            result = cli.invoke(app, ["trace", "check", *args])
            assert result.exit_code == 2, (case, result.output)
            assert message in result.output, (case, result.output)
        ok = cli.invoke(
            app,
            [
                "trace",
                "check",
                "--repo",
                name,
                "--scope",
                scope(tmp_path, "requirements: [REQ-101]\n"),
            ],
        )
        assert ok.exit_code == 0, ok.output


class TestRefusedFile:
    """A refused trace file fails the gate, with its place and rule."""

    def test_refused_trace_file_fails(
        self, cli: CliRunner, tmp_path: Path, gateway: Gateway, settings: Settings, unique: str
    ) -> None:
        name = f"gateref-{unique}"
        repo = GitRepo(tmp_path / "refused")
        repo.write("docs/req.md", "REQ-301: The shop shall save orders.\n")
        repo.write("app/orders.py", "def save():\n    return 1\n")
        repo.write(
            "tests/test_orders.py",
            "from app.orders import save\n\n\ndef test_save_req_301():\n    assert save()\n",
        )
        first = repo.commit("code", WHEN)
        repo.write(
            "trace/orders.yml",
            f"links:\n  - requirement: REQ-301\n    target: app.orders.save\n"
            f"    kind: implemented_by\n    commit: {first}\n",
        )
        repo.write(
            "trace/broken.yml",
            "links:\n  - requirement: REQ-301\n    target: app.orders.save\n"
            "    kind: implemented_by\n    commit: " + "1" * 40 + "\n",
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
        result = cli.invoke(app, ["trace", "check", "--repo", name])
        assert result.exit_code == 1, result.output
        assert "trace/broken.yml" in result.output
        assert "unknown-commit" in result.output

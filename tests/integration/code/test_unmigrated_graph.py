"""A graph that lacks a migration is refused before anything is written.

Without the key constraints every key lookup scans its whole label: an index of a
large repository into such a graph ran for minutes without end. The CLI index (and
the index daemon, which runs the same call) and the workers' gateway check first.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata.code.reads import CodeReads
from strata.code.service import CodeService
from strata.errors import MigrationError
from strata.graph.gateway import Gateway
from strata.ontology import Ontology
from strata.settings import Settings
from strata.temporal import AsOf
from strata_workers.context import WorkerContext
from tests.gitrepo import GitRepo

C1 = datetime(2025, 3, 1, tzinfo=UTC)


def _one_more_migration(settings: Settings, tmp_path: Path) -> tuple[Settings, Path]:
    """The project's migrations plus one the graph has not seen (a newer release)."""
    directory = tmp_path / "migrations"
    shutil.copytree(settings.migrations_dir, directory)
    count = len(list(directory.glob("*.cypher")))
    later = directory / f"{count + 1:04d}_later.cypher"
    later.write_text("RETURN 1;\n")
    return settings.model_copy(update={"migrations_dir": directory}), later


class TestUnmigratedGraph:
    def test_index_refuses_and_writes_nothing(
        self,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"unmigrated-{unique}"
        repo = GitRepo(tmp_path / name)
        repo.write("app/m.py", "def f():\n    return 1\n")
        repo.commit("one", C1)
        newer, later = _one_more_migration(settings, tmp_path)
        service = CodeService(newer, gateway, ontology)
        with pytest.raises(MigrationError, match=later.name[:4]) as caught:
            service.index_path(repo.path, repo=name, ref="main")
        assert "strata migrate" in (caught.value.hint or "")
        assert CodeReads(gateway, ontology).branches(name, AsOf.at()) == []
        # The same index with the graph at head (the project's own migrations) writes.
        CodeService(settings, gateway, ontology).index_path(repo.path, repo=name, ref="main")
        assert [b.ref for b in CodeReads(gateway, ontology).branches(name, AsOf.at())] == ["main"]

    def test_worker_gateway_checks_again_until_migrated(
        self, settings: Settings, tmp_path: Path
    ) -> None:
        newer, later = _one_more_migration(settings, tmp_path)
        context = WorkerContext(newer)
        try:
            with pytest.raises(MigrationError, match="missing migration"):
                _ = context.gateway
            later.unlink()  # as if the migration had been applied meanwhile
            assert context.gateway.read("RETURN 1 AS one") == [{"one": 1}]
        finally:
            context.close()

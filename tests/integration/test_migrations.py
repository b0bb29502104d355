"""Migrations against the real Neo4j: apply once, re-run as a no-op, refuse edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.errors import MigrationError
from strata.graph import migrations
from strata.graph.gateway import Gateway


def _write(directory: Path, name: str, text: str) -> None:
    (directory / name).write_text(text)


class TestMigrations:
    """Numbered Cypher files are applied in order and recorded with their checksum."""

    def test_apply_then_noop_then_refuse_edit(
        self, gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        label = f"Mig{unique}"
        _write(
            tmp_path,
            "0001_first.cypher",
            f"CREATE INDEX mig_{unique}_a IF NOT EXISTS FOR (n:{label}) ON (n.a);\n",
        )
        _write(
            tmp_path,
            "0002_second.cypher",
            f"// a comment\nCREATE INDEX mig_{unique}_b IF NOT EXISTS FOR (n:{label}) ON (n.b);\n",
        )

        applied = migrations.migrate(gateway, tmp_path, namespace=unique)
        assert [m.id for m in applied] == [1, 2]
        names = {row["name"] for row in gateway.read("SHOW INDEXES YIELD name RETURN name")}
        assert {f"mig_{unique}_a", f"mig_{unique}_b"} <= names

        assert migrations.migrate(gateway, tmp_path, namespace=unique) == []
        state = migrations.status(gateway, tmp_path, namespace=unique)
        assert state.applied == (1, 2)
        assert state.at_head

        _write(
            tmp_path,
            "0002_second.cypher",
            f"CREATE INDEX mig_{unique}_c IF NOT EXISTS FOR (n:{label}) ON (n.c);\n",
        )
        with pytest.raises(MigrationError, match="edited after it was applied"):
            migrations.migrate(gateway, tmp_path, namespace=unique)
        names = {row["name"] for row in gateway.read("SHOW INDEXES YIELD name RETURN name")}
        assert f"mig_{unique}_c" not in names

    def test_pending_is_reported(self, gateway: Gateway, tmp_path: Path, unique: str) -> None:
        _write(tmp_path, "0001_only.cypher", "RETURN 1;\n")
        state = migrations.status(gateway, tmp_path, namespace=unique)
        assert state.pending == (1,)
        assert not state.at_head

    def test_failed_statement_is_not_recorded(
        self, gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        _write(tmp_path, "0001_broken.cypher", "THIS IS NOT CYPHER;\n")
        with pytest.raises(MigrationError, match="0001_broken failed"):
            migrations.migrate(gateway, tmp_path, namespace=unique)
        assert migrations.status(gateway, tmp_path, namespace=unique).pending == (1,)

    def test_project_migrations_are_at_head(self, gateway: Gateway, settings) -> None:  # type: ignore[no-untyped-def]
        assert migrations.status(gateway, settings.migrations_dir).at_head

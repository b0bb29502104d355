"""Migration files: statement splitting and file-name rules (no database)."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.errors import MigrationError
from strata.graph.migrations import load_migrations, split_statements


class TestSplitStatements:
    """A migration file splits into statements at `;` line ends, skipping comments."""

    def test_splits_and_strips_comments(self) -> None:
        text = "// header\nCREATE INDEX a IF NOT EXISTS\nFOR (n:A) ON (n.x);\n\nCREATE INDEX b;\n"
        assert split_statements(text) == [
            "CREATE INDEX a IF NOT EXISTS\nFOR (n:A) ON (n.x)",
            "CREATE INDEX b",
        ]

    def test_trailing_statement_without_semicolon(self) -> None:
        assert split_statements("RETURN 1") == ["RETURN 1"]


class TestLoadMigrations:
    """Files must be numbered 0001, 0002, ... with no gaps."""

    def test_gap_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "0001_a.cypher").write_text("RETURN 1;")
        (tmp_path / "0003_c.cypher").write_text("RETURN 1;")
        with pytest.raises(MigrationError, match="without gaps"):
            load_migrations(tmp_path)

    def test_bad_name_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "1_a.cypher").write_text("RETURN 1;")
        with pytest.raises(MigrationError, match=r"0001_name\.cypher"):
            load_migrations(tmp_path)

    def test_project_migrations_load(self) -> None:
        from strata.settings import PROJECT_ROOT

        loaded = load_migrations(PROJECT_ROOT / "migrations")
        assert [m.id for m in loaded] == list(range(1, len(loaded) + 1))

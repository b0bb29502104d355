"""Declared receiver types through the indexer into the real Neo4j, one case per
language: every call edge the case's ``expected.yaml`` lists is stored and read back
as a caller, nothing else calls those symbols, and the trap's same-name method on
the other type has no caller at all."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from strata.code.indexer import CodeIndexer
from strata.code.reads import CodeReads
from strata.git import Git
from strata.temporal import AsOf
from tests.gitrepo import GitRepo

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "calls"
WHEN = datetime(2025, 7, 1, tzinfo=UTC)

# language -> (case, the trap: a same-name method no call of the case may reach)
LANGUAGES = {
    "typescript": ("receivers/typed_param", "main.ts:AuditLog.save", {"main.ts:record"}),
    "javascript": ("receivers/this_field", "main.js:Stack.push", set()),
    "java": ("receivers/declared_types", "Main.java:AuditLog.add", set()),
    "csharp": ("receivers/declared_types", "Program.cs:AuditLog.Trim", set()),
    "go": ("interfaces/method_sets", "main.go:HalfWriter.Write", set()),
    "rust": ("traits/dyn_dispatch", "src/main.rs:Plot.area", set()),
    "kotlin": ("interfaces/implementers", "Main.kt:Cache.get", set()),
    "php": ("receivers/declared_types", "Service.php:Service.register", set()),
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_typed_receivers_in_the_graph(
    language: str, tmp_path: Path, indexer: CodeIndexer, code_reads: CodeReads, unique: str
) -> None:
    case, trap, trap_callers = LANGUAGES[language]
    shutil.copytree(CASES / language / case, tmp_path / language)
    expected = yaml.safe_load((tmp_path / language / "expected.yaml").read_text())["edges"]
    repo = GitRepo(tmp_path / language)
    sha = repo.commit("fixture", WHEN)
    name = f"{language}-{unique}"
    indexer.index(Git(repo.path), name, "main", sha)
    as_of = AsOf.at(WHEN + timedelta(days=1))

    def callers(target: str) -> set[tuple[str, str]]:
        path, qualname = target.split(":", 1)
        found = code_reads.callers(f"{name}|main|{path}|{qualname}", as_of, first=50)
        return {
            (f"{h.path}:{h.key.rsplit('|', 1)[-1]}", h.resolution)
            for h in found
            if h.label == "Symbol"
        }

    wanted: dict[str, set[str]] = {}
    for edge in expected:
        if not edge["caller"].endswith(":<module>"):
            wanted.setdefault(edge["callee"], set()).add(edge["caller"])
    assert wanted
    kinds: set[str] = set()
    for callee, callers_wanted in wanted.items():
        stored = callers(callee)
        assert {caller for caller, _ in stored} == callers_wanted, callee
        kinds |= {kind for _, kind in stored}
    assert "flow" in kinds or "override" in kinds  # resolved through a declared type
    assert {caller for caller, _ in callers(trap)} == trap_callers


def test_methods_declared_outside_their_types_file(
    tmp_path: Path, indexer: CodeIndexer, code_reads: CodeReads, unique: str
) -> None:
    """Go methods in another file than their receiver type index (no containment edge
    to a symbol the file does not define) and their calls are stored."""
    shutil.copytree(CASES / "go" / "receivers" / "fields", tmp_path / "fields")
    repo = GitRepo(tmp_path / "fields")
    sha = repo.commit("fixture", WHEN)
    name = f"go-fields-{unique}"
    result = indexer.index(Git(repo.path), name, "main", sha)
    assert result.mode == "full"
    found = code_reads.callers(
        f"{name}|main|methods.go|DB.Query", AsOf.at(WHEN + timedelta(days=1)), first=50
    )
    assert {h.key.rsplit("|", 1)[-1] for h in found} == {"Store.Load"}

"""A re-sync's read of open versions: one statement for a push's few files, one per
fact type for a large set; both read the same versions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.store import ONE_READ_MAX_SCOPES, FactStore
from strata.ontology import Ontology
from tests.gitrepo import GitRepo
from tests.integration.workers.stack import generated_repo, module_path
from tests.recording import recorded_reads

C1 = datetime(2025, 9, 1, tzinfo=UTC)


class TestOpenVersions:
    """Below and above ONE_READ_MAX_SCOPES the open versions read are the same."""

    def test_one_read_and_per_type_reads_agree(
        self,
        indexer: CodeIndexer,
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"open-{unique}"
        _indexed(indexer, tmp_path, name)
        node = ontology.node("File")
        paths = [module_path(i) for i in range(6)]
        scopes = [node.make_key({"repo": name, "ref": "main", "path": p}) for p in paths]
        store = FactStore(gateway, ontology)
        few = store.open_versions("code", scopes)  # one statement
        padding = [f"{name}|main|absent-{i}.py" for i in range(ONE_READ_MAX_SCOPES)]
        many = store.open_versions("code", [*scopes, *padding])  # one per type
        assert len(scopes) <= ONE_READ_MAX_SCOPES < len(scopes) + len(padding)
        assert few == many
        found = {rel for rel, slots in few.items() if slots}
        assert {"STATE", "DEFINES", "CALLS", "IMPORTS"} <= found
        assert sum(len(slots) for slots in few.values()) > 40

    def test_warming_plans_the_reads_a_push_takes_and_reads_nothing(
        self,
        indexer: CodeIndexer,
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        name = f"warm-{unique}"
        repo = _indexed(indexer, tmp_path, name)
        store = FactStore(gateway, ontology)
        warmed = recorded_reads(monkeypatch, lambda: store.warm_open_reads("code"))
        assert len(warmed) == 2
        assert all(not rows for _, rows in warmed)
        repo.write(module_path(2), (repo.path / module_path(2)).read_text() + "\nX = 1\n")
        after = repo.commit("one file", C1 + timedelta(days=1))
        pushed = recorded_reads(
            monkeypatch, lambda: indexer.index(Git(repo.path), name, "main", after)
        )
        open_reads = [text for text, _ in pushed if "$scopes" in text]
        assert open_reads  # a push's reads of open facts: each one a warmed statement
        assert set(open_reads) <= {text for text, _ in warmed}


def _indexed(indexer: CodeIndexer, tmp_path: Path, name: str) -> GitRepo:
    """A generated repository of six modules, indexed as ``name``."""
    repo, head = generated_repo(tmp_path / name, 6, C1)
    indexer.index(Git(repo.path), name, "main", head)
    return repo

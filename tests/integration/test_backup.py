"""Backup and restore: a dump restored into a fresh Neo4j answers exactly as the original."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.code.reads import CodeReads
from strata.devstack.neo4j import Neo4jServer
from strata.errors import ValidationError
from strata.git import Git
from strata.graph import backup, migrations
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology, load_ontology
from strata.settings import Settings
from strata.temporal import AsOf
from tests.conftest import TEST_PASSWORD, free_port
from tests.gitrepo import GitRepo

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "code" / "python"
C1 = datetime(2025, 1, 1, tzinfo=UTC)
C2 = datetime(2025, 2, 1, tzinfo=UTC)
ALL_NODES = "MATCH (n) WHERE NOT n:Migration RETURN labels(n) AS l, properties(n) AS p"
ALL_RELS = (
    "MATCH (a)-[r]->(b) RETURN type(r) AS t, properties(r) AS p, "
    "coalesce(a.key, a.uuid, a.name, a.key_id) AS s, coalesce(b.key, b.uuid, b.name, b.key_id) AS e"
)


@pytest.fixture(scope="module")
def ontology(settings: Settings) -> Ontology:
    return load_ontology(settings.ontology_dir)


@pytest.fixture(scope="module")
def fresh(settings: Settings, neo4j_server: Neo4jServer) -> Iterator[Gateway]:
    """A second Neo4j (own port and data folder): the shared test store holds other
    tests' labels (migration tests make their own), which a backup rightly refuses."""
    server = Neo4jServer(
        var_dir=settings.var_dir,
        port=free_port(),
        password=TEST_PASSWORD,
        heap_mb=512,
        pagecache_mb=64,
        name="neo4j-restore",
    )
    shutil.rmtree(server.data_dir, ignore_errors=True)
    server.start(timeout=180)
    try:
        with Gateway.open(server.uri, user="neo4j", password=TEST_PASSWORD) as gateway:
            yield gateway
    finally:
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)


def _canonical(gateway: Gateway) -> tuple[list[str], list[str]]:
    nodes = sorted(
        json.dumps([sorted(r["l"]), backup._props(r["p"])], sort_keys=True)
        for r in gateway.read(ALL_NODES, timeout=300)
    )
    rels = sorted(
        json.dumps([r["t"], r["s"], r["e"], backup._props(r["p"])], sort_keys=True)
        for r in gateway.read(ALL_RELS, timeout=300)
    )
    return nodes, rels


def _answers(reads: CodeReads, keys: list[str], as_of: AsOf) -> list[Any]:
    out: list[Any] = []
    for key in keys:
        symbol = reads.symbol(key, as_of)
        callers = reads.callers(key, as_of, depth=3, first=100)
        callees = reads.callees(key, as_of, depth=3, first=100)
        out.append(
            (
                key,
                symbol and (symbol.kind, symbol.qualname, symbol.state),
                [(h.key, h.depth, h.line, h.resolution) for h in callers],
                [(h.key, h.depth, h.line, h.resolution) for h in callees],
                reads.impact(key, as_of, first=100),  # callers, entrypoints, tests, unresolved
                reads.history(key),  # every version with its four times
            )
        )
    return out


def _wipe(gateway: Gateway) -> None:
    """Back to a brand-new store: no data, no constraints, no indexes but the built-in ones."""
    gateway.write("MATCH (n) DETACH DELETE n")
    for row in gateway.read("SHOW CONSTRAINTS YIELD name RETURN name"):
        gateway.run_autocommit(f"DROP CONSTRAINT `{row['name']}`")
    for row in gateway.read("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"):
        gateway.run_autocommit(f"DROP INDEX `{row['name']}`")


class TestBackupRestore:
    """A dump of the graph loads into a fresh store; every answer reads back the same."""

    def test_restored_store_answers_the_same(
        self, fresh: Gateway, ontology: Ontology, settings: Settings, tmp_path: Path, unique: str
    ) -> None:
        _wipe(fresh)
        migrations.migrate(fresh, settings.migrations_dir)
        name = f"bk-{unique}"
        repo = GitRepo(tmp_path / name)
        shutil.copytree(FIXTURE, repo.path, dirs_exist_ok=True)
        first = repo.commit("fixture", C1)
        models = repo.path / "shop" / "models.py"
        models.write_text(models.read_text() + "\n\ndef added():\n    return 1\n")
        second = repo.commit("one more", C2)
        indexer = CodeIndexer(
            FactStore(fresh, ontology), Reads(fresh, ontology), cache=ExtractCache(tmp_path / "c")
        )
        indexer.index(Git(repo.path), name, "main", first)
        indexer.index(Git(repo.path), name, "main", second)
        reads = CodeReads(fresh, ontology)
        keys = [s.key for s in reads.find_symbols(AsOf.at(), path="shop", repo=name, first=100)]
        assert len(keys) > 5
        moments = (AsOf.at(), AsOf.at(valid_at=C1))
        graph_before = _canonical(fresh)
        answers_before = [_answers(reads, keys, as_of) for as_of in moments]
        branches_before = [reads.branches(name, as_of) for as_of in moments]
        assert all(branches_before)

        path = tmp_path / "graph.strata.gz"
        dumped = backup.dump(fresh, ontology, path)
        assert dumped.nodes > 0
        assert dumped.relationships > 0
        _wipe(fresh)
        assert fresh.read(backup.COUNT_NODES)[0]["n"] == 0
        loaded = backup.restore(fresh, ontology, path, settings.migrations_dir)

        assert (loaded.nodes, loaded.relationships) == (dumped.nodes, dumped.relationships)
        assert _canonical(fresh) == graph_before
        assert [_answers(reads, keys, as_of) for as_of in moments] == answers_before
        assert [reads.branches(name, as_of) for as_of in moments] == branches_before
        leftover = "SHOW INDEXES YIELD name WHERE name = 'strata_restore_id' RETURN name"
        assert fresh.read(leftover) == []

    def test_refuses_a_store_that_is_not_empty(
        self, fresh: Gateway, ontology: Ontology, settings: Settings, tmp_path: Path
    ) -> None:
        migrations.migrate(fresh, settings.migrations_dir)
        fresh.write("CREATE (:Repository {key: 'bk-not-empty', repo: 'bk-not-empty'})")
        path = tmp_path / "graph.strata.gz"
        backup.dump(fresh, ontology, path)
        before = fresh.read(backup.COUNT_NODES)[0]["n"]
        with pytest.raises(ValidationError, match="not empty"):
            backup.restore(fresh, ontology, path, settings.migrations_dir)
        assert fresh.read(backup.COUNT_NODES)[0]["n"] == before

    def test_refuses_a_graph_with_undeclared_labels(
        self, fresh: Gateway, ontology: Ontology, tmp_path: Path
    ) -> None:
        fresh.write("CREATE (:Stowaway {key: 'x'})")
        try:
            with pytest.raises(ValidationError, match="Stowaway"):
                backup.dump(fresh, ontology, tmp_path / "x.gz")
            assert not (tmp_path / "x.gz").exists()
        finally:
            fresh.write("MATCH (n:Stowaway) DELETE n")


class TestBadBackups:
    """A truncated, foreign or undeclared backup is refused before anything is written."""

    def _write(self, path: Path, lines: list[dict[str, Any]]) -> Path:
        with gzip.open(path, "wt") as out:
            for line in lines:
                out.write(json.dumps(line) + "\n")
        return path

    def _header(self) -> dict[str, Any]:
        return {"format": backup.FORMAT, "version": backup.FORMAT_VERSION, "migrations": []}

    def test_truncated_file(self, ontology: Ontology, settings: Settings, tmp_path: Path) -> None:
        node = {"n": 1, "l": ["Repository"], "p": {"key": "x"}}
        path = self._write(tmp_path / "t.gz", [self._header(), node])
        with pytest.raises(ValidationError, match="truncated"):
            backup.read_backup(path, ontology, settings.migrations_dir)

    def test_footer_counts_must_match(
        self, ontology: Ontology, settings: Settings, tmp_path: Path
    ) -> None:
        node = {"n": 1, "l": ["Repository"], "p": {"key": "x"}}
        end = {"end": {"nodes": 2, "relationships": 0}}
        path = self._write(tmp_path / "c.gz", [self._header(), node, end])
        with pytest.raises(ValidationError, match="footer counts"):
            backup.read_backup(path, ontology, settings.migrations_dir)

    def test_undeclared_label_and_type(
        self, ontology: Ontology, settings: Settings, tmp_path: Path
    ) -> None:
        label = {"n": 1, "l": ["Evil`) DETACH DELETE n //"], "p": {}}
        path = self._write(tmp_path / "l.gz", [self._header(), label])
        with pytest.raises(ValidationError, match="not declared"):
            backup.read_backup(path, ontology, settings.migrations_dir)
        rel = {"r": "DROPS", "s": 1, "e": 1, "p": {}}
        path = self._write(tmp_path / "r.gz", [self._header(), rel])
        with pytest.raises(ValidationError, match="not declared"):
            backup.read_backup(path, ontology, settings.migrations_dir)

    def test_not_a_backup(self, ontology: Ontology, settings: Settings, tmp_path: Path) -> None:
        plain = tmp_path / "plain.gz"
        plain.write_bytes(b"not gzip at all")
        with pytest.raises(ValidationError, match="cannot be read"):
            backup.read_backup(plain, ontology, settings.migrations_dir)
        foreign = self._write(tmp_path / "f.gz", [{"format": "other", "version": 1}])
        with pytest.raises(ValidationError, match="not a Strata backup"):
            backup.read_backup(foreign, ontology, settings.migrations_dir)

    def test_unknown_migration(
        self, ontology: Ontology, settings: Settings, tmp_path: Path
    ) -> None:
        header = self._header() | {"migrations": [{"id": 999, "name": "x", "checksum": "0"}]}
        end = {"end": {"nodes": 0, "relationships": 0}}
        path = self._write(tmp_path / "m.gz", [header, end])
        with pytest.raises(ValidationError, match="0999"):
            backup.read_backup(path, ontology, settings.migrations_dir)

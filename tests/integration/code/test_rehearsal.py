"""The worker rehearses a push's fact writes after a large run (strata.graph.rehearsal):
every statement a real push's write ran is one the rehearsal ran too (so Neo4j has
planned it), and the rehearsal writes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.code.service import REHEARSE_AFTER_VERSIONS, CodeService
from strata.git import Git
from strata.graph import gateway as gateway_module
from strata.graph.gateway import Gateway, Tx
from strata.graph.reads import Reads
from strata.graph.rehearsal import REHEARSAL
from strata.graph.store import FactStore
from strata.ontology import Ontology
from strata.settings import Settings
from tests.gitrepo import GitRepo

C1 = datetime(2025, 10, 1, tzinfo=UTC)
C2 = datetime(2025, 10, 2, tzinfo=UTC)

BASE = """\
import json
from pkg.b import Helper


class Base:
    def run(self):
        return json.dumps(self.value())

    def value(self):
        return 1


class Child(Base):
    def value(self):
        return Helper().make()


def main():
    return Child().run()
"""
HELPER = """\
class Helper:
    def make(self):
        return 2
"""
# A push: a method's body changes, a call and a class go, an import and a function come.
CHANGED = """\
import os
from pkg.b import Helper


class Base:
    def run(self):
        return str(self.value())

    def value(self):
        return Helper().make() + 1


def main():
    return Base().run() + len(os.sep)


def extra():
    return main()
"""
MADE_UP = "MATCH (n) WHERE n.key STARTS WITH $prefix RETURN count(n) AS n"
COUNTS = "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS nodes, count(r) AS rels"


@contextmanager
def statements_written() -> Iterator[set[str]]:
    """The text of every statement run inside a transaction function meanwhile."""
    seen: set[str] = set()
    run = gateway_module.Tx.run

    def noted(self: Tx, text: str, **params: Any) -> list[dict[str, Any]]:
        seen.add(text)
        return run(self, text, **params)

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(gateway_module.Tx, "run", noted)
        yield seen


def test_a_push_writes_only_statements_the_rehearsal_planned(
    gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/a.py", BASE)
    repo.write("pkg/b.py", HELPER)
    first = repo.commit("first", C1)
    repo.write("pkg/a.py", CHANGED)
    second = repo.commit("second", C2)
    store = FactStore(gateway, ontology)
    indexer = CodeIndexer(store, Reads(gateway, ontology), cache=ExtractCache(tmp_path / "c"))
    name = f"rehearsed-{unique}"
    indexer.index(Git(repo.path), name, "main", first)
    with statements_written() as pushed:
        result = indexer.index(Git(repo.path), name, "main", second)
    assert result.mode == "incremental"
    assert result.created  # versions replaced ...
    assert result.closed  # ... and closed: the paths a push takes
    before = gateway.read(COUNTS)[0]
    with statements_written() as rehearsed:
        store.rehearse_writes("code")
    assert gateway.read(COUNTS)[0] == before  # rolled back: no node, no version
    assert gateway.read(MADE_UP, prefix=REHEARSAL) == [{"n": 0}]
    writes = {text for text in pushed if "CREATE" in text or "SET" in text}
    assert len(writes) >= 5
    assert writes <= rehearsed, sorted(writes - rehearsed)


def test_a_rehearsal_that_fails_midway_leaves_nothing_behind(gateway: Gateway) -> None:
    before = gateway.read(COUNTS)[0]

    def fails(tx: Tx) -> None:
        tx.run("CREATE (:File {key: $key})", key=REHEARSAL)
        raise RuntimeError("stopped midway")

    with pytest.raises(RuntimeError):
        gateway.rehearse(fails)
    assert gateway.read(COUNTS)[0] == before
    assert gateway.read(MADE_UP, prefix=REHEARSAL) == [{"n": 0}]


def test_only_a_large_run_has_the_writes_rehearsed_and_off_the_callers_thread(
    settings: Settings, gateway: Gateway, ontology: Ontology
) -> None:
    service = CodeService(settings, gateway, ontology)
    service.warm_push(REHEARSE_AFTER_VERSIONS - 1)  # a push's few versions: reads only
    assert service._rehearsal is None
    before = gateway.read(COUNTS)[0]
    with statements_written() as rehearsed:
        service.warm_push(REHEARSE_AFTER_VERSIONS)
        thread = service._rehearsal
        assert thread is not None
        thread.join(timeout=120)
    assert not thread.is_alive()
    assert any("MERGE" in text for text in rehearsed)
    assert gateway.read(COUNTS)[0] == before

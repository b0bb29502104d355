"""Callers, callees and impact against the real Neo4j: recursion, and what the graph could
not see (unresolved call sites that may reach the symbol)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.code.indexer import CodeIndexer
from strata.code.reads import CodeReads
from strata.git import Git
from strata.ontology import Ontology
from strata.temporal import AsOf
from tests.gitrepo import GitRepo

C1 = datetime(2025, 5, 1, tzinfo=UTC)
C2 = datetime(2025, 6, 1, tzinfo=UTC)

LIB = """\
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


class Store:
    def get(self, key):
        return key


def helper():
    return 1
"""

OTHER = """\
class Cache:
    def get(self, key):
        return None
"""

USE_V1 = """\
from lib import helper


def read(s):
    return s.get("k")


def run():
    return helper()


config.get("x")
"""

USE_V2 = USE_V1.replace('    return s.get("k")', "    return s")

TEST_USE = """\
from use import read


def test_read():
    assert read(None) is None
"""


def at(when: datetime) -> AsOf:
    return AsOf.at(when + timedelta(days=1))


@pytest.fixture
def indexed(
    tmp_path: Path, indexer: CodeIndexer, ontology: Ontology, unique: str
) -> tuple[str, list[str], GitRepo]:
    repo = GitRepo(tmp_path / "calls")
    repo.write("lib.py", LIB)
    repo.write("other.py", OTHER)
    repo.write("use.py", USE_V1)
    repo.write("test_use.py", TEST_USE)
    shas = [repo.commit("first", C1)]
    name = f"calls-{unique}"
    indexer.index(Git(repo.path), name, "main", shas[0])
    return name, shas, repo


def symbol_key(ontology: Ontology, repo: str, path: str, qualname: str) -> str:
    return ontology.node("Symbol").make_key(
        {"repo": repo, "ref": "main", "path": path, "qualname": qualname}
    )


class TestRecursion:
    """A symbol that calls itself is its own caller and callee, once, at depth 1."""

    def test_self_call(
        self,
        indexed: tuple[str, list[str], GitRepo],
        code_reads: CodeReads,
        ontology: Ontology,
    ) -> None:
        name, _, _ = indexed
        fact = symbol_key(ontology, name, "lib.py", "fact")
        callers = code_reads.callers(fact, at(C1), depth=3)
        assert [(h.key, h.depth, h.line, h.resolution) for h in callers] == [(fact, 1, 2, "local")]
        callees = code_reads.callees(fact, at(C1), depth=3)
        assert [(h.key, h.depth, h.via) for h in callees] == [(fact, 1, fact)]


class TestUnresolved:
    """Callers and impact count the unresolved sites named like the symbol, as of a moment."""

    def test_callers_say_what_they_could_not_see(
        self,
        indexed: tuple[str, list[str], GitRepo],
        code_reads: CodeReads,
        ontology: Ontology,
    ) -> None:
        name, _, _ = indexed
        get = symbol_key(ontology, name, "lib.py", "Store.get")
        callers = code_reads.callers(get, at(C1))
        assert list(callers) == []
        assert callers.unresolved is not None
        assert callers.unresolved.names == ("get",)
        assert callers.unresolved.count == 2
        assert callers.unresolved.by_name == {"get": 2}
        sample = callers.unresolved.sample
        assert sorted((s.path, s.caller or "", s.callee, s.line) for s in sample) == [
            ("use.py", "", "config.get", 12),
            ("use.py", "read", "s.get", 5),
        ]
        helper = symbol_key(ontology, name, "lib.py", "helper")
        resolved = code_reads.callers(helper, at(C1))
        assert [h.key.rsplit("|", 1)[-1] for h in resolved] == ["run"]
        assert resolved.unresolved is not None
        assert resolved.unresolved.count == 0
        assert resolved.total == 1
        assert not resolved.truncated
        assert code_reads.callers(helper, at(C1), unresolved=False).unresolved is None

    def test_deeper_callers_count_sites_named_like_the_hops_between(
        self,
        indexed: tuple[str, list[str], GitRepo],
        code_reads: CodeReads,
        ontology: Ontology,
    ) -> None:
        name, _, _ = indexed
        read = symbol_key(ontology, name, "use.py", "read")
        one = code_reads.callers(read, at(C1), depth=1)
        assert one.unresolved is not None
        assert one.unresolved.names == ("read",)
        two = code_reads.callers(read, at(C1), depth=2)
        assert [h.key.rsplit("|", 1)[-1] for h in two] == ["test_read"]
        assert two.unresolved is not None
        assert two.unresolved.names == ("read", "test_read")

    def test_callees_list_the_unlinked_calls_inside(
        self,
        indexed: tuple[str, list[str], GitRepo],
        code_reads: CodeReads,
        ontology: Ontology,
    ) -> None:
        name, _, _ = indexed
        read = symbol_key(ontology, name, "use.py", "read")
        callees = code_reads.callees(read, at(C1))
        assert list(callees) == []
        assert callees.unresolved is not None
        assert [(s.callee, s.line) for s in callees.unresolved.sample] == [("s.get", 5)]
        assert callees.unresolved.by_name == {"get": 1}

    def test_impact_empty_tests_are_not_silently_safe(
        self,
        indexed: tuple[str, list[str], GitRepo],
        code_reads: CodeReads,
        ontology: Ontology,
    ) -> None:
        name, _, _ = indexed
        get = symbol_key(ontology, name, "lib.py", "Store.get")
        view = code_reads.impact(get, at(C1))
        assert view.tests == []
        assert view.callers == []
        assert view.unresolved.count == 2
        read = symbol_key(ontology, name, "use.py", "read")
        reached = code_reads.impact(read, at(C1))
        assert [h.key.rsplit("|", 1)[-1] for h in reached.tests] == ["test_read"]
        assert reached.unresolved.names == ("read", "test_read")
        assert reached.unresolved.count == 0

    def test_counts_follow_history_and_stay_in_their_repository(
        self,
        indexed: tuple[str, list[str], GitRepo],
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
    ) -> None:
        name, shas, repo = indexed
        indexer.index(Git(repo.path), f"{name}-twin", "main", shas[0])
        repo.write("use.py", USE_V2)
        shas.append(repo.commit("read no longer calls get", C2))
        indexer.index(Git(repo.path), name, "main", shas[1])
        get = symbol_key(ontology, name, "lib.py", "Store.get")
        twin = symbol_key(ontology, f"{name}-twin", "lib.py", "Store.get")

        def count(key: str, when: datetime, repos: list[str] | None = None) -> int:
            found = code_reads.callers(key, at(when), repos=repos).unresolved
            assert found is not None
            return found.count

        assert count(get, C2) == 1
        assert count(get, C1) == 2
        assert count(twin, C2) == 2
        assert count(get, C2, repos=["elsewhere"]) == 0

"""Indexing a Python repository's history into the real Neo4j, fully and incrementally."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.code.indexer import CodeIndexer
from strata.code.reads import CodeReads
from strata.errors import GitError
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.ontology import Ontology
from strata.temporal import AsOf
from tests.gitrepo import GitRepo

C1 = datetime(2025, 1, 1, tzinfo=UTC)
C2 = datetime(2025, 2, 1, tzinfo=UTC)
C3 = datetime(2025, 3, 1, tzinfo=UTC)
C4 = datetime(2025, 4, 1, tzinfo=UTC)

MODELS = """\
class Order:
    def validate(self):
        return True

    def save(self):
        self.validate()
        return "saved"


class Invoice:
    def validate(self):
        return False
"""

HELPERS_V1 = """\
def fmt(x):
    return str(x)
"""

HELPERS_V2 = """\
def fmt(x):
    return "<" + str(x) + ">"
"""

SERVICE = """\
import app.helpers as h
from app.models import Order


def place():
    order = Order()
    order.save()
    unknown_thing()
    return h.fmt(order)
"""

MAIN = """\
from app.service import place

if __name__ == "__main__":
    place()
"""


def key(ontology: Ontology, repo: str, path: str, qualname: str) -> str:
    return ontology.node("Symbol").make_key(
        {"repo": repo, "ref": "main", "path": path, "qualname": qualname}
    )


@pytest.fixture
def history(tmp_path: Path) -> tuple[GitRepo, list[str]]:
    repo = GitRepo(tmp_path / "shop")
    repo.write("app/__init__.py", "")
    repo.write("app/models.py", MODELS)
    repo.write("app/helpers.py", HELPERS_V1)
    repo.write("app/service.py", SERVICE)
    repo.write("main.py", MAIN)
    shas = [repo.commit("initial", C1)]
    repo.write("app/helpers.py", HELPERS_V2)
    shas.append(repo.commit("fmt: brackets", C2))
    repo.rename("app/models.py", "app/orders.py")
    repo.write("app/service.py", SERVICE.replace("app.models", "app.orders"))
    shas.append(repo.commit("rename models to orders", C3))
    repo.delete("main.py")
    shas.append(repo.commit("drop main", C4))
    return repo, shas


def callers(reads: CodeReads, symbol: str, when: datetime) -> list[tuple[str, str]]:
    hits = reads.callers(symbol, AsOf.at(when + timedelta(days=1)), depth=1, first=50)
    return sorted(
        (h.path + (":" + h.key.rsplit("|", 1)[-1] if h.label == "Symbol" else ""), h.resolution)
        for h in hits
    )


class TestFullIndex:
    """A full index resolves calls to single declarations and keeps unresolved ones."""

    def test_first_commit(
        self,
        history: tuple[GitRepo, list[str]],
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        repo, shas = history
        name = f"shop-{unique}"
        result = indexer.index(Git(repo.path), name, "main", shas[0])
        assert result.mode == "full"
        assert result.files_total == 5
        validate = key(ontology, name, "app/models.py", "Order.validate")
        other = key(ontology, name, "app/models.py", "Invoice.validate")
        assert callers(code_reads, validate, C1) == [("app/models.py:Order.save", "self")]
        assert callers(code_reads, other, C1) == []
        fmt = key(ontology, name, "app/helpers.py", "fmt")
        assert callers(code_reads, fmt, C1) == [("app/service.py:place", "import")]
        place = key(ontology, name, "app/service.py", "place")
        assert callers(code_reads, place, C1) == [("main.py", "import")]
        order = key(ontology, name, "app/models.py", "Order")
        assert ("app/service.py:place", "import") in callers(code_reads, order, C1)
        view = code_reads.symbol(place, AsOf.at(C1 + timedelta(days=1)))
        assert view is not None
        assert view.state["qualified_name"] == "app.service.place"
        assert any(u.startswith("unknown_thing@") for u in view.state["unresolved_calls"])
        assert view.state["source_commit"] == shas[0]

    def test_same_commit_twice_changes_nothing(
        self,
        history: tuple[GitRepo, list[str]],
        indexer: CodeIndexer,
        unique: str,
        gateway: Gateway,
    ) -> None:
        repo, shas = history
        name = f"shop-{unique}"
        indexer.index(Git(repo.path), name, "main", shas[0])
        before = gateway.read("MATCH (n {repo: $r})-[x]->() RETURN count(x) AS c", r=name)
        again = indexer.index(Git(repo.path), name, "main", shas[0])
        assert again.mode == "unchanged"
        after = gateway.read("MATCH (n {repo: $r})-[x]->() RETURN count(x) AS c", r=name)
        assert before == after


class TestHistory:
    """Incremental reindex along history: survive, re-resolve, close, and read as of before."""

    def test_history(
        self,
        history: tuple[GitRepo, list[str]],
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        gateway: Gateway,
        unique: str,
    ) -> None:
        repo, shas = history
        name = f"shop-{unique}"
        git = Git(repo.path)
        results = indexer.index_history(git, name, "main", shas)
        assert [r.mode for r in results] == ["full", "incremental", "incremental", "incremental"]
        # c2 changed only helpers.py: the caller's file was not re-written ...
        assert results[1].files_written < results[0].files_written
        fmt = key(ontology, name, "app/helpers.py", "fmt")
        # ... and its inbound CALLS edge survived as one open version since c1.
        versions = gateway.read(
            "MATCH (:Symbol {key: $src})-[c:CALLS]->(:Symbol {key: $dst}) "
            "RETURN toString(c.valid_at) AS v, c.invalid_at AS i, c.expired_at AS e",
            src=key(ontology, name, "app/service.py", "place"),
            dst=fmt,
        )
        assert len(versions) == 1
        assert versions[0]["v"].startswith("2025-01-01")
        assert versions[0]["i"] is None
        # the body change made a new version of fmt's state at c2
        fmt_states = gateway.read(
            "MATCH (s:Symbol {key: $k})-[r:STATE]->(s) RETURN r.body_hash AS h", k=fmt
        )
        assert len({row["h"] for row in fmt_states}) == 2

        # c3 renamed models.py -> orders.py: callers follow the move, the past stays readable.
        old_validate = key(ontology, name, "app/models.py", "Order.validate")
        new_validate = key(ontology, name, "app/orders.py", "Order.validate")
        assert callers(code_reads, new_validate, C3) == [("app/orders.py:Order.save", "self")]
        assert code_reads.symbol(old_validate, AsOf.at(C3 + timedelta(days=1))) is None
        assert code_reads.symbol(old_validate, AsOf.at(C2 + timedelta(days=1))) is not None
        new_order = key(ontology, name, "app/orders.py", "Order")
        assert ("app/service.py:place", "import") in callers(code_reads, new_order, C3)

        # c4 deleted main.py: its call to place() is closed, but visible as of c3.
        place = key(ontology, name, "app/service.py", "place")
        assert callers(code_reads, place, C4) == []
        assert callers(code_reads, place, C3) == [("main.py", "import")]


class TestBadInput:
    """Bad repositories and files give clear errors or skip reasons, and write nothing wrong."""

    def test_not_a_git_repository(
        self, indexer: CodeIndexer, tmp_path: Path, gateway: Gateway, unique: str
    ) -> None:
        (tmp_path / "plain").mkdir()
        with pytest.raises(GitError, match="not a git repository"):
            indexer.index(Git(tmp_path / "plain"), f"x-{unique}", "main", "HEAD")
        assert (
            gateway.read("MATCH (n {repo: $r}) RETURN count(n) AS c", r=f"x-{unique}")[0]["c"] == 0
        )

    def test_missing_commit(
        self,
        history: tuple[GitRepo, list[str]],
        indexer: CodeIndexer,
        gateway: Gateway,
        unique: str,
    ) -> None:
        repo, _ = history
        with pytest.raises(GitError, match="cannot resolve"):
            indexer.index(Git(repo.path), f"y-{unique}", "main", "a" * 40)
        assert (
            gateway.read("MATCH (n {repo: $r}) RETURN count(n) AS c", r=f"y-{unique}")[0]["c"] == 0
        )

    def test_skips_and_recovers(
        self,
        tmp_path: Path,
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        repo = GitRepo(tmp_path / "messy")
        repo.write("ok.py", "def fine():\n    return 1\n")
        repo.write("broken.py", "def half(:\n    pass\n\ndef whole():\n    return 2\n")
        repo.write("latin.py", b"# caf\xe9\ndef latin():\n    return '\xe9'\n")
        repo.write("blob.py", b"\x00\x01\x02binary")
        repo.write("big.py", "x = 1\n" * 10_000)
        repo.write("node_modules/lib/index.js", "function vendored() {}\n")
        repo.write(
            "gen.py", "# Code generated by a tool. DO NOT EDIT.\ndef generated():\n    pass\n"
        )
        repo.symlink("escape.py", "/etc/passwd")
        sha = repo.commit("messy", C1)
        name = f"messy-{unique}"
        result = indexer.index(Git(repo.path), name, "main", sha)
        assert result.skipped == {
            "binary": 1,
            "too_large": 1,
            "vendored_or_generated_dir": 1,
            "generated": 1,
            "symlink": 1,
        }
        assert result.parse_errors == 1
        as_of = AsOf.at(C1 + timedelta(days=1))
        assert code_reads.symbol(key(ontology, name, "broken.py", "whole"), as_of) is not None
        assert code_reads.symbol(key(ontology, name, "latin.py", "latin"), as_of) is not None
        assert code_reads.symbol(key(ontology, name, "ok.py", "fine"), as_of) is not None

"""Body words: a word used only inside a function finds it, when git has the blob."""

from __future__ import annotations

from pathlib import Path

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.code.service import CodeService
from strata.devstack.redis import RedisServer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.locations import record_local_source, repository_git
from strata.ontology import Ontology
from strata.search.bodies import git_blob_source
from strata.search.docs import SearchIndex
from strata.search.service import SearchService
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.search.conftest import C1

POOL = '''\
def close_all(handles):
    """Close every handle."""
    for handle in handles:
        handle.shutdown_gracefully()


def open_all(names):
    """Open every name."""
    return [open(name) for name in names]
'''

TESTS = """\
from pool import close_all


def test_close_all():
    close_all([])  # shutdown_gracefully is never reached
"""


def _indexed(gateway: Gateway, ontology: Ontology, tmp_path: Path, name: str) -> Path:
    repo = GitRepo(tmp_path / "pool")
    repo.write("pool.py", POOL)
    repo.write("tests/test_pool.py", TESTS)
    sha = repo.commit("initial", C1)
    indexer = CodeIndexer(
        FactStore(gateway, ontology), Reads(gateway, ontology), cache=ExtractCache(tmp_path / "c")
    )
    indexer.index(Git(repo.path), name, "main", sha)
    return repo.path


class TestBodyWords:
    """Documents carry the words of their code; without the blob they still answer."""

    def test_body_word_finds_symbol_and_file_before_its_test(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
    ) -> None:
        name = f"pool-{unique}"
        path = _indexed(gateway, ontology, tmp_path, name)
        index = SearchIndex(gateway, None, blobs=git_blob_source(lambda _: path))
        result = SearchService(gateway, index).search("shut down gracefully", name)
        symbols = [h for h in result.hits if h.label == "Symbol"]
        assert symbols[0].qualified_name == "pool.close_all"
        assert "fulltext" in {m.retriever for m in symbols[0].matches}
        # The test file uses the word too, but counts half: the code comes first.
        assert [f.path for f in result.files][:2] == ["pool.py", "tests/test_pool.py"]
        asked = SearchService(gateway, index).search("tests shutdown gracefully", name)
        assert asked.files[0].path == "tests/test_pool.py"

    def test_without_the_blob_body_words_are_left_out(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
    ) -> None:
        name = f"pool-{unique}"
        _indexed(gateway, ontology, tmp_path, name)
        index = SearchIndex(gateway, None, blobs=lambda _repo, _shas: {})
        result = SearchService(gateway, index).search("shutdown gracefully", name)
        assert "pool.close_all" not in [h.qualified_name for h in result.hits]
        assert SearchService(gateway, index).search("close every handle", name).hits


class TestWhereTheBlobsAre:
    """A repository indexed from a local clone (`strata index PATH`) has no mirror and
    no registration: the default readers still find its blobs."""

    def test_cli_indexed_repository_gets_body_words(
        self,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology,
        redis_server: RedisServer,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"pool-{unique}"
        repo = GitRepo(tmp_path / "clone")
        repo.write("pool.py", POOL)
        repo.commit("initial", C1)
        CodeService(settings, gateway, ontology).index_path(repo.path, repo=name, ref="main")
        index = SearchIndex(gateway, None)  # the default blob reader, as the API builds it
        result = SearchService(gateway, index).search("shut down gracefully", name)
        assert next(h.qualified_name for h in result.hits if h.label == "Symbol") == (
            "pool.close_all"
        )

    def test_locator_order_and_missing_folders(
        self, gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        name = f"loc-{unique}"
        clone, mirrors = tmp_path / "clone", tmp_path / "mirrors"
        clone.mkdir()
        assert repository_git(gateway, mirrors)(name) is None  # nothing known: no guess
        record_local_source(gateway, name, clone)
        assert repository_git(gateway, mirrors)(name) == clone.resolve()
        (mirrors / f"{name}.git").mkdir(parents=True)  # a mirror wins over the local clone
        assert repository_git(gateway, mirrors)(name) == mirrors / f"{name}.git"
        record_local_source(gateway, name, tmp_path / "moved-away")
        (mirrors / f"{name}.git").rmdir()
        assert repository_git(gateway, mirrors)(name) is None  # a vanished folder is no answer

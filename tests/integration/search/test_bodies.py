"""Body words: a word used only inside a function finds it, when git has the blob."""

from __future__ import annotations

from pathlib import Path

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology
from strata.search.bodies import git_blob_source
from strata.search.docs import SearchIndex
from strata.search.service import SearchService
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

"""A push documents just the nodes it changed, by key; a later full sync misses nothing,
whichever size its pages are."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology
from strata.search import docs
from strata.search.docs import SearchIndex
from tests.integration.search.conftest import build_repo
from tests.recording import recorded_statements

C3 = datetime(2025, 5, 1, tzinfo=UTC)

DOCS = "MATCH (d:SearchDoc {repo: $repo}) RETURN d.name AS name ORDER BY name"


def _indexer(gateway: Gateway, ontology: Ontology, tmp_path: Path) -> CodeIndexer:
    return CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(tmp_path / "cache"),
    )


class TestNodeDocuments:
    """Only the changed nodes get documents from a push; the cursor's scan still finds all."""

    # A push's nodes in one read and one write; or, past the page size, a page per label.
    @pytest.mark.parametrize("page", [1000, 1])
    def test_a_push_documents_its_changed_nodes(
        self,
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
        page: int,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setattr(docs, "WRITE_BATCH", page)
        repo, shas = build_repo(tmp_path / "shop")
        indexer = _indexer(gateway, ontology, tmp_path)
        name = f"nodedocs-{unique}"
        indexer.index(Git(repo.path), name, "main", shas[-1])
        search = SearchIndex(gateway)
        assert search.sync(name).documents > 0
        before = [r["name"] for r in gateway.read(DOCS, repo=name)]
        repo.write(
            "billing/payments.py",
            (repo.path / "billing/payments.py").read_text()
            + '\n\ndef settle_ledger(amount):\n    """Book the amount in the ledger."""\n'
            "    return amount\n",
        )
        after = repo.commit("settle the ledger", C3)
        result = indexer.index(Git(repo.path), name, "main", after)
        assert result.mode == "incremental"
        changed = {key.rsplit("|", 1)[-1] for _, key in result.changed_nodes}
        assert "settle_ledger" in changed
        assert "refund" not in changed  # unchanged symbols of the same file are not resent
        assert len({label for label, _ in result.changed_nodes}) > 1  # a File and Symbols
        warmed, warmed_writes = recorded_statements(monkeypatch, search.warm_push_statements)
        assert len(warmed) == 4  # File and Symbol keys in lists of one and two; File alone
        assert len({text for text, _ in warmed}) == 2
        assert all(not rows for _, rows in warmed)  # read nothing
        assert [r["name"] for r in gateway.read(DOCS, repo=name)] == before  # wrote nothing
        counts: list[int] = []
        pushed, pushed_writes = recorded_statements(
            monkeypatch, lambda: counts.append(search.sync_nodes(result.changed_nodes))
        )
        if page > 2:  # the push's one read is a statement the worker planned after a job
            assert [text for text, _ in pushed] == [warmed[0][0]]
        assert pushed_writes  # and so are its writes
        assert set(pushed_writes) <= set(warmed_writes)
        written = counts[0]
        names = [r["name"] for r in gateway.read(DOCS, repo=name)]
        assert "settle_ledger" in set(names) - set(before)
        assert written == len(names) - len(before)  # one per new state version (file, symbol)
        assert search.sync_nodes(result.changed_nodes) == 0  # a repeat writes nothing
        assert search.sync(name).documents == 0  # the scan finds them documented


class TestPagedSync:
    """A sync reads and writes its documents a page at a time; the pages change nothing."""

    def test_many_pages_write_the_documents_of_one_page(
        self,
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        repo, shas = build_repo(tmp_path / "shop")
        indexer = _indexer(gateway, ontology, tmp_path)
        texts: dict[int, list[tuple[str, str, str]]] = {}
        for page in (docs.WRITE_BATCH, 3):  # every state in one page; then pages of three
            monkeypatch.setattr(docs, "WRITE_BATCH", page)
            name = f"paged{page}-{unique}"
            indexer.index(Git(repo.path), name, "main", shas[-1])
            written = SearchIndex(gateway).sync(name).documents
            rows = gateway.read(PAGE_DOCS, repo=name)
            assert written == len(rows) > 3 * 3  # more than three pages of three
            texts[page] = [(r["name"], r["kind"], r["text"]) for r in rows]
        one, paged = texts.values()
        assert paged == one
        assert any("authorize" in text for _, _, text in paged)  # body words read per page


PAGE_DOCS = """
MATCH (d:SearchDoc {repo: $repo})
RETURN d.name AS name, d.kind AS kind, d.text AS text ORDER BY name, kind, text
"""

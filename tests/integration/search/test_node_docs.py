"""A push documents just the nodes it changed, by key; a later full sync misses nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology
from strata.search.docs import SearchIndex
from tests.integration.search.conftest import build_repo

C3 = datetime(2025, 5, 1, tzinfo=UTC)

DOCS = "MATCH (d:SearchDoc {repo: $repo}) RETURN d.name AS name ORDER BY name"


class TestNodeDocuments:
    """Only the changed nodes get documents from a push; the cursor's scan still finds all."""

    def test_a_push_documents_its_changed_nodes(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
    ) -> None:
        repo, shas = build_repo(tmp_path / "shop")
        indexer = CodeIndexer(
            FactStore(gateway, ontology),
            Reads(gateway, ontology),
            cache=ExtractCache(tmp_path / "cache"),
        )
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
        written = search.sync_nodes(result.changed_nodes)
        names = [r["name"] for r in gateway.read(DOCS, repo=name)]
        assert "settle_ledger" in set(names) - set(before)
        assert written == len(names) - len(before)  # one per new state version (file, symbol)
        assert search.sync_nodes(result.changed_nodes) == 0  # a repeat writes nothing
        assert search.sync(name).documents == 0  # the scan finds them documented

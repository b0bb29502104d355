"""An index's candidate pool filled by another repository or another kind still
answers: the retriever asks again with a wider pool (real Neo4j, real encoder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology
from strata.search import service as search_service
from strata.search.docs import Embed, SearchIndex
from strata.search.service import POOL, SearchService
from tests.gitrepo import GitRepo
from tests.integration.search.conftest import C1, Indexed

QUERY = "give money back to the customer"
CROWD = POOL + 60  # more near-identical documents than one pool holds


def crowd_source() -> str:
    """Functions whose name and docstring are the query itself, and one class."""
    parts = [
        f'def give_money_back_{i}(customer):\n    """Give money back to the customer."""\n'
        f"    return customer\n\n\n"
        for i in range(CROWD)
    ]
    parts.append(
        'class MoneyBack:\n    """Give money back to the customer, as a class."""\n\n    pass\n'
    )
    return "".join(parts)


@pytest.fixture
def crowd(gateway: Gateway, ontology: Ontology, embed: Embed, tmp_path: Path, unique: str) -> str:
    repo = GitRepo(tmp_path / "crowd")
    repo.write("refunds.py", crowd_source())
    sha = repo.commit("crowd", C1)
    indexer = CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(tmp_path / "cache"),
    )
    name = f"crowd-{unique}"
    indexer.index_history(Git(repo.path), name, "main", [sha])
    SearchIndex(gateway, embed).sync(name, embed_budget=None)  # every document embedded
    return name


@pytest.fixture
def service(gateway: Gateway, embed: Embed) -> SearchService:
    return SearchService(gateway, SearchIndex(gateway, embed), embed_per_search=1000)


def test_vector_pool_full_of_another_repository(
    service: SearchService, shop: Indexed, crowd: str
) -> None:
    # The crowd's documents are nearer the query than anything of the shop, and there
    # are more of them than one pool: the first pool holds no document of the shop.
    crowded = service.search(QUERY, crowd, retrievers=["vector"], first=5)
    assert len(crowded.hits) == 5
    result = service.search(QUERY, shop.repo, retrievers=["vector"], first=5)
    assert result.hits, "the shop's own documents must still be found"
    assert result.hits[0].qualified_name == "billing.payments.PaymentGateway.refund"
    assert "refunds.py" not in {h.evidence.path for h in result.hits}  # not the crowd's


def test_fulltext_pool_full_of_another_kind(service: SearchService, crowd: str) -> None:
    # Every function matches the words better than the one class does; a kind filter
    # applied after a pool of functions would leave nothing.
    result = service.search(QUERY, crowd, retrievers=["fulltext"], kinds=["class"], first=5)
    assert [h.qualified_name for h in result.hits] == ["refunds.MoneyBack"]


def test_a_small_repository_is_scored_exactly(
    service: SearchService,
    shop: Indexed,
    crowd: str,
    gateway: Gateway,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a starved first pool, a repository of at most EXACT_MAX documents is scored
    in one pass; a larger one widens the pool, and both find the same best hit."""
    asked: list[str] = []
    read = gateway.read

    def spy(text: str, **params: object) -> list[dict[str, object]]:
        if text == search_service.VECTOR_EXACT:
            asked.append("exact")
        elif text == search_service.VECTOR:
            asked.append(f"pool {params['pool']}")
        return read(text, **params)  # type: ignore[arg-type]

    monkeypatch.setattr(gateway, "read", spy)
    exact = service.search(QUERY, shop.repo, retrievers=["vector"], first=5)
    assert asked == [f"pool {POOL}", "exact"]
    asked.clear()
    monkeypatch.setattr(search_service, "EXACT_MAX", 0)  # as if the shop were large
    widened = service.search(QUERY, shop.repo, retrievers=["vector"], first=5)
    assert asked[:2] == [f"pool {POOL}", "exact"]
    assert asked[2:] == [f"pool {p}" for p in search_service.POOLS[1 : len(asked) - 1]]
    assert len(asked) > 2
    assert exact.hits[0].qualified_name == "billing.payments.PaymentGateway.refund"
    assert widened.hits[0].qualified_name == exact.hits[0].qualified_name

"""Hybrid search over an indexed repository, on the real Neo4j."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.errors import NotFound, ValidationError
from strata.facts import Source, StateFact
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology
from strata.search import service as search_service
from strata.search.bodies import git_blob_source
from strata.search.docs import CURSOR, Embed, SearchIndex
from strata.search.service import SearchService
from strata.temporal import AsOf
from strata.writers import CodeWriter
from tests.gitrepo import GitRepo
from tests.integration.search.conftest import C1, C2, Indexed


@pytest.fixture
def service(gateway: Gateway, embed: Embed) -> SearchService:
    return SearchService(gateway, SearchIndex(gateway, embed), embed_per_search=1000)


def with_bodies(gateway: Gateway, embed: Embed, shop: Indexed) -> SearchService:
    """A service whose documents carry the words of the code (read from the shop's git)."""
    index = SearchIndex(gateway, embed, blobs=git_blob_source(lambda _: shop.path))
    return SearchService(gateway, index, embed_per_search=1000)


def names(result_hits: list[object]) -> list[str]:
    return [h.qualified_name for h in result_hits]  # type: ignore[attr-defined]


class TestRetrievers:
    """Each retriever finds what it should, and every hit says why and where."""

    def test_identifier_words_match_across_case_styles(
        self, service: SearchService, shop: Indexed
    ) -> None:
        result = service.search("grand total", shop.repo, first=5)
        top = result.hits[0]
        assert top.name == "computeGrandTotal"
        assert top.evidence.path == "web/cart.ts"
        assert top.evidence.line_start == 3
        assert top.evidence.commit == shop.shas[0]
        assert "fulltext" in {m.retriever for m in top.matches}

    def test_snake_case_query_finds_exact_symbol_first(
        self, service: SearchService, shop: Indexed
    ) -> None:
        result = service.search("capture_payment", shop.repo, first=5)
        assert result.hits[0].qualified_name == "billing.payments.capture_payment"
        assert result.hits[0].evidence.commit == shop.shas[1]

    def test_docstring_words_and_vectors(self, service: SearchService, shop: Indexed) -> None:
        result = service.search("give money back to the customer", shop.repo, first=5)
        assert result.hits[0].qualified_name == "billing.payments.PaymentGateway.refund"
        retrievers = {m.retriever for m in result.hits[0].matches}
        assert {"fulltext", "vector"} <= retrievers
        assert result.pending_embeddings == 0

    def test_graph_neighbours_of_strong_hits_are_boosted(
        self, service: SearchService, shop: Indexed
    ) -> None:
        result = service.search("capture_payment", shop.repo, first=10)
        graph = {
            h.qualified_name: m.via
            for h in result.hits
            for m in h.matches
            if m.retriever == "graph"
        }
        # place_order calls capture_payment: reached through the call graph
        assert "billing.orders.place_order" in graph
        assert "CALLS" in (graph["billing.orders.place_order"] or "")

    def test_a_longer_query_finds_the_symbol_it_names_as_code(
        self, service: SearchService, shop: Indexed
    ) -> None:
        """``apply_discount`` in a sentence is a name, looked up exactly, not two words."""
        result = service.search(
            "rounding is wrong when apply_discount() gets a big coupon", shop.repo, first=5
        )
        top = result.hits[0]
        assert top.qualified_name == "billing.orders.apply_discount"
        assert "name" in {m.retriever for m in top.matches}

    def test_a_file_the_query_names_leads_the_files(
        self, service: SearchService, shop: Indexed
    ) -> None:
        result = service.search("the totals in cart.ts look off", shop.repo, first=10)
        assert result.files[0].path == "web/cart.ts"
        file_hit = next(h for h in result.hits if h.label == "File")
        assert file_hit.evidence.path == "web/cart.ts"
        assert "name" in {m.retriever for m in file_hit.matches}

    def test_coverage_ranks_files_by_the_query_words_they_hold(
        self, gateway: Gateway, embed: Embed, shop: Indexed
    ) -> None:
        service = with_bodies(gateway, embed, shop)
        query = "gateway amount customer order total"
        result = service.search(query, shop.repo, first=10, retrievers=["coverage"])
        covered = {
            h.evidence.path: m.score for h in result.hits for m in h.matches
        }  # the only retriever: every hit is a File and says how many words it holds
        assert {h.label for h in result.hits} == {"File"}
        assert covered["billing/payments.py"] == 5
        assert covered["billing/orders.py"] == 3
        assert covered["web/cart.ts"] == 1  # computeGrandTotal: "total"
        assert [f.path for f in result.files][:2] == ["billing/payments.py", "billing/orders.py"]
        # Fused with the others, the file that holds every word leads the files.
        assert service.search(query, shop.repo, first=10).files[0].path == "billing/payments.py"

    def test_coverage_reads_each_file_as_of_the_time_asked(
        self, gateway: Gateway, embed: Embed, shop: Indexed
    ) -> None:
        service = with_bodies(gateway, embed, shop)

        def covered(as_of: AsOf | None) -> float:
            result = service.search(
                "capture payment", shop.repo, first=10, retrievers=["coverage"], as_of=as_of
            )
            hit = next(h for h in result.hits if h.evidence.path == "billing/payments.py")
            return hit.matches[0].score

        assert covered(AsOf.at(C1 + timedelta(days=1))) == 1  # charge_card: no "capture"
        assert covered(None) == 2

    def test_kinds_and_layers_filter(self, service: SearchService, shop: Indexed) -> None:
        result = service.search("payment", shop.repo, kinds=["class"], first=5)
        assert result.hits
        assert {h.kind for h in result.hits} == {"class"}
        files = service.search("cart", shop.repo, kinds=["file"], first=5)
        assert files.hits[0].evidence.path == "web/cart.ts"
        assert {h.kind for h in files.hits} == {"file"}
        knowledge = service.search("cart", shop.repo, layers=["knowledge"], first=5)
        assert knowledge.hits == []  # no requirement mentions a cart: empty, not an error

    def test_requirement_text(self, service: SearchService, shop: Indexed) -> None:
        result = service.search("customer card payment", shop.repo, layers=["knowledge"])
        top = result.hits[0]
        assert (top.label, top.name, top.kind) == ("Requirement", "REQ-001", "requirement")
        assert top.evidence.path == "docs/requirements.md"
        assert top.evidence.line_start == 3
        assert "capture the payment" in (top.summary or "")


class TestAsOf:
    """Search reads the versions visible at the requested moment."""

    def test_old_name_found_only_in_the_past(self, service: SearchService, shop: Indexed) -> None:
        before = AsOf.at(C1 + timedelta(days=1))
        old = service.search("charge_card", shop.repo, as_of=before, first=3)
        assert old.hits[0].qualified_name == "billing.payments.charge_card"
        assert old.hits[0].evidence.commit == shop.shas[0]
        now = service.search("charge_card", shop.repo, first=10)
        assert "billing.payments.charge_card" not in names(now.hits)
        after = AsOf.at(C2 + timedelta(days=1))
        assert "billing.payments.capture_payment" in names(
            service.search("capture payment", shop.repo, as_of=after, first=3).hits
        )


class TestBadInput:
    """Bad input is a typed error; an unknown repository is NotFound, never []."""

    @pytest.mark.parametrize(
        ("query", "kwargs"),
        [
            ("", {}),
            ("   ", {}),
            ("x" * 10_001, {}),
            ("bin\x00ary", {}),
            (b"bytes", {}),
            ("ok", {"layers": ["nope"]}),
            ("ok", {"layers": []}),
            ("ok", {"kinds": ["widget"]}),
            ("ok", {"first": 0}),
            ("ok", {"first": 51}),
            ("ok", {"first": True}),
        ],
    )
    def test_refused(
        self, service: SearchService, shop: Indexed, query: object, kwargs: dict[str, object]
    ) -> None:
        with pytest.raises(ValidationError):
            service.search(query, shop.repo, **kwargs)  # type: ignore[arg-type]

    def test_unknown_repository(self, service: SearchService) -> None:
        with pytest.raises(NotFound):
            service.search("anything", "no-such-repo-xyz")

    def test_unreadable_repository_looks_unknown(
        self, service: SearchService, shop: Indexed
    ) -> None:
        with pytest.raises(NotFound):
            service.search("payment", shop.repo, repos=["other"])

    @pytest.mark.parametrize(
        "query", ['title:"x" AND (', "a OR b NOT c", "*", "~foo^3", "path:/etc/passwd", "\\"]
    )
    def test_lucene_syntax_is_plain_text(
        self, service: SearchService, shop: Indexed, query: str
    ) -> None:
        service.search(query, shop.repo)  # no parser error reaches the caller


class TestDocumentSync:
    """The search documents follow the facts, including a batch that commits late."""

    def test_the_cursor_moves_past_what_others_wrote(
        self, gateway: Gateway, ontology: Ontology, shop: Indexed
    ) -> None:
        """States of another repository (or ones a push already documented) written
        after the cursor do not make every later search scan for them again."""
        index = SearchIndex(gateway, None)
        index.sync(shop.repo)
        other = StateFact(
            "Symbol",
            {
                "repo": f"{shop.repo}-other",
                "ref": "main",
                "path": "o.py",
                "qualname": "o",
                "name": "o",
            },
            {
                "kind": "function",
                "qualified_name": "o.o",
                "line_start": 1,
                "line_end": 2,
                "body_hash": "b1",
                "language": "python",
            },
            C2,
            source=Source(commit=shop.shas[1], path="o.py", line=1),
        )
        CodeWriter(FactStore(gateway, ontology)).write([other])
        assert gateway.read(CURSOR, repo=shop.repo)[0]["fresh"] > 0
        assert index.sync(shop.repo).documents == 0  # nothing of this repository
        assert gateway.read(CURSOR, repo=shop.repo)[0]["fresh"] == 0

    def test_a_first_sync_documents_its_own_repository_only(
        self, gateway: Gateway, ontology: Ontology, shop: Indexed, tmp_path: Path
    ) -> None:
        """A repository documented from the start is found by its keys' prefix: another
        whose name extends it (``shop-x2`` beside ``shop-x``) is not documented with it,
        and every state of each gets its document."""
        longer = f"{shop.repo}2"
        indexer = CodeIndexer(
            FactStore(gateway, ontology),
            Reads(gateway, ontology),
            cache=ExtractCache(tmp_path / "cache-longer"),
            max_file_bytes=20_000,
        )
        indexer.index_history(Git(shop.path), longer, "main", shop.shas)
        index = SearchIndex(gateway, None)
        count = "MATCH (d:SearchDoc {repo: $repo}) RETURN count(d) AS c"
        assert gateway.read(count, repo=shop.repo)[0]["c"] == 0
        written = index.sync(shop.repo).documents
        assert written > 0
        assert gateway.read(count, repo=shop.repo)[0]["c"] == written
        assert gateway.read(count, repo=longer)[0]["c"] == 0
        assert index.sync(longer).documents > 0
        undocumented = """
        MATCH (n)-[st:STATE]->(n)
        WHERE n.key STARTS WITH $prefix AND (n:Symbol OR n:File OR n:Requirement OR n:Decision)
          AND st.hash IS NOT NULL
          AND NOT EXISTS { MATCH (d:SearchDoc {key: n.key + '#' + st.hash}) }
        RETURN count(st) AS c
        """
        for repo in (shop.repo, longer):
            assert gateway.read(undocumented, prefix=f"{repo}|")[0]["c"] == 0, repo
        strays = gateway.read(
            "MATCH (d:SearchDoc)-[:INDEXES]->(n) WHERE d.repo IN $repos AND n.repo <> d.repo "
            "RETURN count(d) AS c",
            repos=[shop.repo, longer],
        )
        assert strays[0]["c"] == 0

    def test_late_commit_behind_the_cursor_is_found(
        self, gateway: Gateway, ontology: Ontology, shop: Indexed
    ) -> None:
        index = SearchIndex(gateway, None)
        index.sync(shop.repo)
        through = gateway.read(
            "MATCH (c:SearchCursor {repo: $repo}) RETURN c.through AS t", repo=shop.repo
        )[0]["t"].to_native()
        # A transaction stamped before the cursor that becomes visible only now.
        late = StateFact(
            "Symbol",
            {
                "repo": shop.repo,
                "ref": "main",
                "path": "late.py",
                "qualname": "lateArrival",
                "name": "lateArrival",
            },
            {
                "kind": "function",
                "qualified_name": "late.lateArrival",
                "line_start": 1,
                "line_end": 2,
                "body_hash": "b0",
                "language": "python",
            },
            C2,
            source=Source(commit=shop.shas[1], path="late.py", line=1),
        )
        writer = CodeWriter(FactStore(gateway, ontology))
        writer.write([late], tx_time=through - timedelta(seconds=5))
        assert index.sync(shop.repo).documents == 1
        assert index.sync(shop.repo).documents == 0  # nothing new: nothing written
        service = SearchService(gateway, index)
        assert service.search("late arrival", shop.repo).hits[0].name == "lateArrival"


RATES = """\
def convert_currency(amount, rate):
    return amount * rate
"""

RATES_STUB = '''\
def convert_currency(amount: float, rate: float) -> float:
    """Convert an amount of money into another currency at the exchange rate."""
'''


class TestStubs:
    """A typing stub restates its module: the module leads unless the query asks for stubs."""

    @pytest.fixture
    def stubbed(self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str) -> str:
        repo = GitRepo(tmp_path / "stubbed")
        repo.write("money/__init__.py", "")
        repo.write("money/rates.py", RATES)
        repo.write("money/rates.pyi", RATES_STUB)
        sha = repo.commit("rates", C1)
        name = f"stubbed-{unique}"
        CodeIndexer(
            FactStore(gateway, ontology),
            Reads(gateway, ontology),
            cache=ExtractCache(tmp_path / "cache"),
        ).index(Git(repo.path), name, "main", sha)
        return name

    QUERY = "convert money into another currency at the exchange rate"

    def test_the_module_leads_its_stub(
        self, service: SearchService, stubbed: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        assert service.search(self.QUERY, stubbed, first=10).files[0].path == "money/rates.py"
        assert service.search(self.QUERY, stubbed, first=10).hits[0].evidence.path == (
            "money/rates.py"
        )
        monkeypatch.setattr(search_service, "STUB_WEIGHT", 1.0)  # the stub's own words win
        # (its docstring; as files the two are a near tie: both hold the same two of the
        # query's words, by their names)
        assert service.search(self.QUERY, stubbed, first=10).hits[0].evidence.path == (
            "money/rates.pyi"
        )

    def test_a_query_about_stubs_keeps_them(self, service: SearchService, stubbed: str) -> None:
        result = service.search(self.QUERY + " in the typing stub", stubbed, first=10)
        assert result.hits[0].evidence.path == "money/rates.pyi"
        assert "money/rates.pyi" in [f.path for f in result.files][:2]

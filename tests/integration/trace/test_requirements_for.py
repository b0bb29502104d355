"""Links into a symbol (``requirementsFor``) describe the symbol at their target end."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.knowledge.sync import KnowledgeSync
from strata.ontology import load_ontology
from strata.settings import Settings
from strata.temporal import AsOf
from strata.trace.reads import TraceReads
from strata.trace.sync import TraceSync
from strata_api.graphql.types.trace import TraceLink
from tests.gitrepo import GitRepo

WHEN = datetime(2025, 6, 1, tzinfo=UTC)
TYPES = ["IMPLEMENTED_BY", "AFFECTS", "VERIFIED_BY"]


class TestRequirementsFor:
    """The implementing and the verifying symbol, each read from its incoming link."""

    def test_links_into_a_symbol(
        self, tmp_path: Path, gateway: Gateway, settings: Settings, unique: str
    ) -> None:
        name = f"into-{unique}"
        repo = GitRepo(tmp_path / "into")
        repo.write("docs/req.md", "REQ-201: The shop shall save orders.\n")
        repo.write("app/orders.py", "def save():\n    return 1\n")
        repo.write(
            "tests/test_orders.py",
            "from app.orders import save\n\n\ndef test_save_req_201():\n    assert save()\n",
        )
        first = repo.commit("code", WHEN)
        repo.write(
            "trace/orders.yml",
            f"links:\n  - requirement: REQ-201\n    target: app.orders.save\n"
            f"    kind: implemented_by\n    status: PROPOSED\n    commit: {first}\n",
        )
        second = repo.commit("trace", WHEN.replace(day=2))
        ontology = load_ontology(settings.ontology_dir)
        store = FactStore(gateway, ontology)
        indexer = CodeIndexer(store, Reads(gateway, ontology), cache=ExtractCache(tmp_path / "c"))
        git = Git(repo.path)
        for sha in (first, second):
            indexer.index(git, name, "main", sha)
            KnowledgeSync(store, gateway).sync(git, name, sha)
            TraceSync(store, gateway).sync(git, name, "main", sha)

        reads, now = TraceReads(gateway), AsOf.at()
        req = ontology.node("Requirement").make_key({"repo": name, "req_id": "REQ-201"})
        targets = {v.type: v.target_key for v in reads.links_from(req, now)}
        assert set(targets) == {"IMPLEMENTED_BY", "VERIFIED_BY"}

        [implemented] = reads.links_into(targets["IMPLEMENTED_BY"], now, types=TYPES)
        assert (implemented.source_key, implemented.target_key) == (
            req,
            targets["IMPLEMENTED_BY"],
        )
        assert implemented.target_label == "Symbol"
        link = TraceLink.from_domain(implemented)
        assert (link.type, link.target_label) == ("IMPLEMENTED_BY", "Symbol")
        assert (link.qualified_name, link.path) == ("app.orders.save", "app/orders.py")

        [verified] = reads.links_into(targets["VERIFIED_BY"], now, types=TYPES)
        link = TraceLink.from_domain(verified)
        assert (link.type, link.target_label) == ("VERIFIED_BY", "Symbol")
        assert link.qualified_name == "tests.test_orders.test_save_req_201"
        assert (link.path, link.test_framework) == ("tests/test_orders.py", "pytest")

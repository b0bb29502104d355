"""Requirement packs and linked requirements, over declared trace links in the real Neo4j."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.context.builder import ContextBuilder
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.knowledge.sync import KnowledgeSync
from strata.ontology import Ontology
from strata.search.docs import SearchIndex
from strata.search.service import SearchService
from strata.trace.sync import TraceSync
from tests.gitrepo import GitRepo

WHEN = datetime(2025, 5, 1, tzinfo=UTC)


def test_requirement_and_linked(
    tmp_path: Path, gateway: Gateway, ontology: Ontology, unique: str
) -> None:
    repo = GitRepo(tmp_path / "req")
    repo.write("docs/req.md", "REQ-101: The shop shall save orders.\n")
    repo.write("app/orders.py", "def save():\n    return 1\n")
    first = repo.commit("code", WHEN)
    repo.write(
        "trace/orders.yml",
        f"links:\n  - requirement: REQ-101\n    target: app.orders.save\n"
        f"    kind: implemented_by\n    status: PROPOSED\n    commit: {first}\n",
    )
    second = repo.commit("trace", WHEN.replace(day=2))
    store = FactStore(gateway, ontology)
    indexer = CodeIndexer(store, Reads(gateway, ontology), cache=ExtractCache(tmp_path / "c"))
    git = Git(repo.path)
    name = f"ctxreq-{unique}"
    for sha in (first, second):
        indexer.index(git, name, "main", sha)
        KnowledgeSync(store, gateway).sync(git, name, sha)
        TraceSync(store, gateway).sync(git, name, "main", sha)
    builder = ContextBuilder(gateway, ontology, SearchService(gateway, SearchIndex(gateway)))

    pack = builder.build("REQ-101: is it implemented?", name)
    assert pack.sufficient
    assert pack.intent == "requirement"
    head = pack.lines[0]
    assert head.text == "requirement REQ-101: The shop shall save orders."
    assert head.cite.path == "docs/req.md"
    links = [line.text for line in pack.lines if line.section == "Links"]
    assert links == ["implemented_by `app.orders.save` (PROPOSED)"]

    explain = builder.build("explain `app.orders.save`", name)
    linked = [line.text for line in explain.lines if line.section == "Linked"]
    assert linked == ["REQ-101 (implemented by it): The shop shall save orders."]

"""A graph written under ontology v1 stays readable, and v2 syncs continue it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
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
from strata.trace.reads import TraceReads, findings
from strata.trace.sync import TraceSync
from strata_api.graphql.types.trace import TraceLink
from tests.gitrepo import GitRepo

WHEN = datetime(2025, 8, 1, tzinfo=UTC)


class TestV1Graph:
    """Links and requirements recorded under v1 read the same and change under v2."""

    def test_v1_then_v2(
        self, tmp_path: Path, gateway: Gateway, settings: Settings, unique: str
    ) -> None:
        name = f"v1-{unique}"
        repo = GitRepo(tmp_path / "v1")
        repo.write("docs/req.md", "REQ-401: The shop shall save orders.\n")
        repo.write("app/orders.py", "def save():\n    return 1\n")
        first = repo.commit("code", WHEN)
        repo.write(
            "trace/orders.yml",
            f"links:\n  - requirement: REQ-401\n    target: app.orders.save\n"
            f"    kind: implemented_by\n    commit: {first}\n",
        )
        second = repo.commit("trace", WHEN + timedelta(days=1))
        repo.write("app/orders.py", "def other():\n    return 2\n")
        third = repo.commit("drop save", WHEN + timedelta(days=2))
        git = Git(repo.path)

        def run(version: int, shas: list[str]) -> None:
            ontology = load_ontology(settings.ontology_dir, version)
            store = FactStore(gateway, ontology)
            indexer = CodeIndexer(
                store, Reads(gateway, ontology), cache=ExtractCache(tmp_path / f"c{version}")
            )
            for sha in shas:
                indexer.index(git, name, "main", sha)
                KnowledgeSync(store, gateway).sync(git, name, sha)
                TraceSync(store, gateway).sync(git, name, "main", sha)

        run(1, [first, second])
        reads = TraceReads(gateway)
        key = (
            load_ontology(settings.ontology_dir)
            .node("Requirement")
            .make_key({"repo": name, "req_id": "REQ-401"})
        )
        [v1_link] = reads.links_from(key, AsOf.at())
        assert (v1_link.link["status"], v1_link.link["ontology"]) == ("PROPOSED", 1)
        view = TraceLink.from_domain(v1_link)
        assert (view.suspect, view.gone_commit, view.qualified_name) == (
            False,
            None,
            "app.orders.save",
        )
        assert findings(gateway, name, AsOf.at()) == []

        run(2, [third])
        [stale] = reads.links_from(key, AsOf.at())
        assert (stale.link["status"], stale.link["ontology"]) == ("STALE", 2)
        assert stale.link["gone_commit"] == third
        [before] = reads.links_from(key, AsOf.at(WHEN + timedelta(days=1, hours=1)))
        assert (before.link["status"], before.link["ontology"]) == ("PROPOSED", 1)
        report = reads.report(name, AsOf.at())
        assert report.counts == {"IMPLEMENTED_BY": {"STALE": 1}}

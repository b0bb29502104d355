"""Documents through graphiti (scripted model, real embedder) into the real Neo4j."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from strata.errors import DatabaseUnavailable
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.knowledge.document_files import read_document
from strata.knowledge.documents import KnowledgeGraph, open_graph
from strata.knowledge.embedder import LocalEmbedder
from strata.knowledge.facts import group_id, search_facts
from strata.ontology import Ontology
from strata.security import RepoSet
from strata.settings import Settings
from strata.temporal import AsOf, native
from tests.gitrepo import GitRepo
from tests.integration.knowledge_docs.conftest import (
    QUEUE_V1,
    QUEUE_V2,
    RABBIT,
    REDIS,
    Graph,
    Ingest,
    at,
    commit_doc,
)
from tests.integration.knowledge_docs.scripted import ScriptedLLMClient


def document_state(gateway: Gateway, ontology: Ontology, repo: str, path: str) -> dict:
    key = ontology.node("Document").make_key({"repo": repo, "path": path})
    found = Reads(gateway, ontology).node_current("Document", key)
    assert found is not None, f"no Document state for {path}"
    return {
        **found.state.props,
        "valid_at": found.state.valid_at,
        "created_at": found.state.created_at,
        "expired_at": found.state.expired_at,
    }


def facts(gateway: Gateway, repo: str, valid: datetime, known: datetime | None = None) -> set:
    found = search_facts(
        gateway,
        "Celery message broker",
        AsOf.at(valid, known),
        readable=RepoSet(all=True),
        repository=repo,
        first=10,
    )
    return {(f.source, f.target, f.document_path) for f in found}


class TestDocumentBecomesEpisode:
    """A document becomes one episode at its own date, with entities, facts and its state."""

    def test_first_ingest(
        self,
        docs: GitRepo,
        ingest: Ingest,
        graph: Graph,
        gateway: Gateway,
        ontology: Ontology,
        repo_name: str,
    ) -> None:
        commit = commit_doc(docs, "docs/notes/queue.md", QUEUE_V1, at("2025-01-11"))
        llm = ScriptedLLMClient([REDIS, RABBIT])
        summary = ingest(commit, llm)

        assert summary.count("ingested") == 1
        assert summary.failed == []
        episodes = gateway.read(
            "MATCH (e:Episodic {group_id: $g}) RETURN e.uuid AS uuid, e.name AS name, "
            "e.valid_at AS valid_at, e.source_description AS marker",
            g=group_id(repo_name),
        )
        assert len(episodes) == 1
        assert episodes[0]["name"] == "docs/notes/queue.md"
        assert native(episodes[0]["valid_at"]) == at("2025-01-10")
        names = {
            r["name"]
            for r in gateway.read(
                "MATCH (n:Entity {group_id: $g}) RETURN n.name AS name", g=group_id(repo_name)
            )
        }
        assert names == {"Celery", "Redis"}
        [edge] = graph.edges()
        assert (edge["source"], edge["target"]) == ("Celery", "Redis")
        assert native(edge["valid_at"]) == at("2025-01-10")
        assert edge["invalid_at"] is None
        assert edge["expired_at"] is None

        state = document_state(gateway, ontology, repo_name, "docs/notes/queue.md")
        assert state["title"] == "Queue choice"
        assert state["episode_uuid"] == episodes[0]["uuid"]
        assert state["reference_time"] == at("2025-01-10")
        assert state["valid_at"] == at("2025-01-10")
        assert state["expired_at"] is None
        assert state["source_commit"] == commit
        tokens = summary.tokens
        assert tokens["calls"] == len(llm.calls) > 0
        assert state["tokens"] == tokens["total_tokens"] > 0

    def test_reingest_of_the_same_content_is_a_no_op(
        self,
        docs: GitRepo,
        ingest: Ingest,
        graph: Graph,
        gateway: Gateway,
        ontology: Ontology,
        repo_name: str,
    ) -> None:
        commit = commit_doc(docs, "docs/notes/queue.md", QUEUE_V1, at("2025-01-11"))
        ingest(commit)
        before = graph.totals()
        state = document_state(gateway, ontology, repo_name, "docs/notes/queue.md")

        docs.write("README.md", "unrelated change\n")
        later = docs.commit("touch another file", at("2025-01-20"))
        llm = ScriptedLLMClient([REDIS])
        again = ingest(later, llm)

        assert [o.status for o in again.outcomes] == ["unchanged"]
        assert llm.calls == []
        assert graph.totals() == before
        assert document_state(gateway, ontology, repo_name, "docs/notes/queue.md") == state

    def test_undated_document_takes_its_last_commit_time(
        self,
        docs: GitRepo,
        ingest: Ingest,
        gateway: Gateway,
        ontology: Ontology,
        repo_name: str,
    ) -> None:
        undated = QUEUE_V1.split("---\n", 2)[2]  # no front matter, no Date: line
        commit_doc(docs, "notes/undated.md", undated, at("2025-02-02"))
        docs.write("README.md", "later\n")
        head = docs.commit("unrelated", at("2025-02-20"))
        ingest(head)
        state = document_state(gateway, ontology, repo_name, "notes/undated.md")
        assert state["reference_time"] == at("2025-02-02")


class TestContradiction:
    """A later document that contradicts a fact closes it; the old fact stays readable."""

    def test_later_document_closes_the_old_fact(
        self,
        docs: GitRepo,
        ingest: Ingest,
        graph: Graph,
        gateway: Gateway,
        repo_name: str,
    ) -> None:
        ingest(commit_doc(docs, "docs/notes/queue.md", QUEUE_V1, at("2025-01-11")))
        between = datetime.now(UTC)
        summary = ingest(commit_doc(docs, "docs/design/broker.md", QUEUE_V2, at("2025-03-02")))

        [outcome] = [o for o in summary.outcomes if o.status == "ingested"]
        assert outcome.invalidated == 1
        old, new = graph.edges()
        assert old["target"] == "Redis"
        assert new["target"] == "RabbitMQ"
        assert native(old["invalid_at"]) == at("2025-03-01")
        assert native(old["expired_at"]) > between  # closed, not deleted
        assert new["invalid_at"] is None
        assert new["expired_at"] is None

        redis = ("Celery", "Redis", "docs/notes/queue.md")
        rabbit = ("Celery", "RabbitMQ", "docs/design/broker.md")
        assert facts(gateway, repo_name, at("2025-02-01")) == {redis}
        assert facts(gateway, repo_name, at("2025-04-01")) == {rabbit}
        assert facts(gateway, repo_name, at("2024-12-01")) == set()
        # What Strata believed before the second document arrived:
        assert facts(gateway, repo_name, at("2025-04-01"), known=between) == {redis}
        # The open fact's end is +infinity: a read as of next year still sees it.
        next_year = datetime.now(UTC) + timedelta(days=365)
        assert facts(gateway, repo_name, next_year) == {rabbit}


class TestConvergence:
    """An episode graphiti wrote before the Document state was recorded is found, not redone."""

    def test_retry_after_a_crash_between_the_two_writes(
        self,
        docs: GitRepo,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology,
        graph: Graph,
        repo_name: str,
        embedder: LocalEmbedder,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        commit = commit_doc(docs, "docs/notes/queue.md", QUEUE_V1, at("2025-01-11"))
        doc = read_document(
            "docs/notes/queue.md", QUEUE_V1.encode(), fallback_time=lambda: datetime.now(UTC)
        )
        original = KnowledgeGraph._record

        async def crash(*args: object, **kwargs: object) -> None:
            raise DatabaseUnavailable("simulated crash after graphiti's commit")

        async def attempt(llm: ScriptedLLMClient) -> object:
            async with open_graph(settings, gateway, ontology, llm=llm, embedder=embedder) as g:
                return await g.ingest(repo_name, doc, commit=commit)

        monkeypatch.setattr(KnowledgeGraph, "_record", crash)
        with pytest.raises(DatabaseUnavailable):
            asyncio.run(attempt(ScriptedLLMClient([REDIS])))
        assert graph.totals() == (1, 2, 1)  # graphiti's transaction committed
        assert (
            Reads(gateway, ontology).node_current(
                "Document",
                ontology.node("Document").make_key(
                    {"repo": repo_name, "path": "docs/notes/queue.md"}
                ),
            )
            is None
        )

        monkeypatch.setattr(KnowledgeGraph, "_record", original)
        llm = ScriptedLLMClient([REDIS])
        outcome = asyncio.run(attempt(llm))
        assert outcome.status == "recovered"
        assert llm.calls == []
        assert graph.totals() == (1, 2, 1)
        state = document_state(gateway, ontology, repo_name, "docs/notes/queue.md")
        [episode] = gateway.read(
            "MATCH (e:Episodic {group_id: $g}) RETURN e.uuid AS uuid", g=group_id(repo_name)
        )
        assert state["episode_uuid"] == episode["uuid"]
        assert "tokens" not in state  # the first attempt's cost is unknown


class TestGraphitiSearch:
    """graphiti's own hybrid search works on a database only Strata's migrations shaped."""

    def test_search_finds_the_fact(
        self,
        docs: GitRepo,
        ingest: Ingest,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology,
        repo_name: str,
        embedder: LocalEmbedder,
    ) -> None:
        ingest(commit_doc(docs, "docs/notes/queue.md", QUEUE_V1, at("2025-01-11")))

        async def search() -> list[str]:
            async with open_graph(
                settings, gateway, ontology, llm=ScriptedLLMClient(), embedder=embedder
            ) as g:
                edges = await g.graphiti.search(
                    "Which message broker does Celery use?", group_ids=[group_id(repo_name)]
                )
                return [e.fact for e in edges]

        assert asyncio.run(search()) == ["Celery uses Redis as its message broker"]

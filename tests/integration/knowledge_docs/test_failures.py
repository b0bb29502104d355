"""A model that is down, slow or talks nonsense fails the document clearly; nothing is written."""

from __future__ import annotations

import pytest

from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.knowledge.llm import LLMTimeout, LLMUnavailable
from strata.ontology import Ontology
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.knowledge_docs.conftest import (
    QUEUE_V1,
    QUEUE_V2,
    RABBIT,
    REDIS,
    Edge,
    Graph,
    Ingest,
    Scenario,
    at,
    commit_doc,
)
from tests.integration.knowledge_docs.scripted import ScriptedLLMClient

PATH = "docs/notes/queue.md"


def no_document_state(gateway: Gateway, ontology: Ontology, repo: str, path: str) -> bool:
    key = ontology.node("Document").make_key({"repo": repo, "path": path})
    return Reads(gateway, ontology).node_current("Document", key) is None


class TestModelDown:
    """An unreachable model is a retryable failure, raised before anything is written."""

    def test_connection_refused(
        self,
        docs: GitRepo,
        ingest: Ingest,
        graph: Graph,
        gateway: Gateway,
        ontology: Ontology,
        repo_name: str,
    ) -> None:
        commit = commit_doc(docs, PATH, QUEUE_V1, at("2025-01-11"))
        llm = ScriptedLLMClient(
            [REDIS], raise_on={"ExtractedEntities": ConnectionRefusedError(111, "refused")}
        )
        with pytest.raises(LLMUnavailable, match="unreachable") as caught:
            ingest(commit, llm)
        assert caught.value.retryable
        assert graph.totals() == (0, 0, 0)
        assert no_document_state(gateway, ontology, repo_name, PATH)


class TestModelSlow:
    """A call slower than STRATA_LLM_TIMEOUT_S fails the document as a retryable timeout."""

    def test_timeout_midway(
        self,
        docs: GitRepo,
        ingest: Ingest,
        graph: Graph,
        gateway: Gateway,
        ontology: Ontology,
        repo_name: str,
    ) -> None:
        commit = commit_doc(docs, PATH, QUEUE_V1, at("2025-01-11"))
        llm = ScriptedLLMClient([REDIS], timeout_s=0.5, delay_on={"ExtractedEdges": 5.0})
        with pytest.raises(LLMTimeout, match=r"within 0.5 s \(ExtractedEdges\)"):
            ingest(commit, llm)
        assert llm.calls == ["ExtractedEntities", "ExtractedEdges"]
        assert graph.totals() == (0, 0, 0)
        assert no_document_state(gateway, ontology, repo_name, PATH)

    def test_whole_document_budget(
        self,
        docs: GitRepo,
        ingest: Ingest,
        graph: Graph,
        settings: Settings,
    ) -> None:
        commit = commit_doc(docs, PATH, QUEUE_V1, at("2025-01-11"))
        local = settings.model_copy(update={"knowledge_document_timeout_s": 0.3})
        llm = ScriptedLLMClient([REDIS], delay_on={"ExtractedEntities": 0.2, "ExtractedEdges": 0.2})
        with pytest.raises(LLMTimeout, match="in all"):
            ingest(commit, llm, local=local)
        assert graph.totals() == (0, 0, 0)


class TestModelNonsense:
    """Invalid JSON, or JSON of the wrong shape, fails that document with the model's words;
    the run goes on with the next document."""

    @pytest.mark.parametrize(
        ("raw", "reason"),
        [
            (
                '{"extracted_entities": [{"name": "Celery", "entity_type_id"',
                "not return valid JSON",
            ),
            ('{"entities": ["Celery"]}', "does not fit ExtractedEntities"),
            ("Sure! Here are the entities: Celery, Redis.", "not return valid JSON"),
        ],
    )
    def test_invalid_output(
        self,
        docs: GitRepo,
        ingest: Ingest,
        graph: Graph,
        gateway: Gateway,
        ontology: Ontology,
        repo_name: str,
        raw: str,
        reason: str,
    ) -> None:
        commit_doc(docs, PATH, QUEUE_V1, at("2025-01-11"))
        commit = commit_doc(docs, "docs/notes/zz-other.md", QUEUE_V2, at("2025-03-02"))

        class OneBadDocument(ScriptedLLMClient):
            async def _complete(self, messages, schema, name, max_tokens, model):  # type: ignore[no-untyped-def]
                bad = name == "ExtractedEntities" and "Redis as its" in messages[-1].content
                self.raw_on = {"ExtractedEntities": raw} if bad else {}
                return await super()._complete(messages, schema, name, max_tokens, model)

        summary = ingest(commit, OneBadDocument([REDIS, RABBIT]))

        [failure] = summary.failed
        assert failure["path"] == PATH
        assert failure["code"] == "llm_invalid_output"
        assert reason in failure["message"]
        assert raw[:40] in failure["details"]["sample"]
        assert failure["details"]["tokens"]["calls"] == 1  # what the failed attempt cost
        assert no_document_state(gateway, ontology, repo_name, PATH)
        assert [o.path for o in summary.outcomes] == ["docs/notes/zz-other.md"]
        episodes = gateway.read(
            "MATCH (e:Episodic {group_id: $g}) RETURN e.name AS name", g=graph.group
        )
        assert [e["name"] for e in episodes] == ["docs/notes/zz-other.md"]


class TestSwallowedFailure:
    """graphiti swallows a failed edge-dating call; the driver's barrier still refuses the write."""

    def test_failed_timestamp_call_writes_nothing(
        self,
        docs: GitRepo,
        ingest: Ingest,
        graph: Graph,
        gateway: Gateway,
        ontology: Ontology,
        repo_name: str,
    ) -> None:
        commit = commit_doc(docs, PATH, QUEUE_V1, at("2025-01-11"))
        undated = Scenario(
            "Redis as its message broker",
            ["Celery", "Redis"],
            [Edge("Celery", "USES_BROKER", "Redis", "Celery uses Redis as its message broker")],
        )
        llm = ScriptedLLMClient(
            [undated], raise_on={"EdgeTimestamps": ConnectionResetError(104, "reset")}
        )
        with pytest.raises(LLMUnavailable):
            ingest(commit, llm)
        assert "EdgeTimestamps" in llm.calls
        assert graph.totals() == (0, 0, 0)
        assert no_document_state(gateway, ontology, repo_name, PATH)

    def test_the_same_call_succeeding_writes_the_document(
        self, docs: GitRepo, ingest: Ingest, graph: Graph
    ) -> None:
        commit = commit_doc(docs, PATH, QUEUE_V1, at("2025-01-11"))
        undated = Scenario(
            "Redis as its message broker",
            ["Celery", "Redis"],
            [Edge("Celery", "USES_BROKER", "Redis", "Celery uses Redis as its message broker")],
        )
        llm = ScriptedLLMClient([undated])
        ingest(commit, llm)
        assert "EdgeTimestamps" in llm.calls
        assert graph.totals() == (1, 2, 1)

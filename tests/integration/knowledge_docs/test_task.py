"""The `strata.knowledge.ingest` task: job records, retries and failures, over real HTTP.

The task builds its model from settings, as in production: here an
OpenAI-compatible endpoint served by :mod:`fake_openai` (scripted, down, slow,
or talking prose). Tasks run eagerly (``apply``), so Celery's retries happen at
once instead of after their backoff.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.jobs import KNOWLEDGE_INGEST, IngestJob
from strata.jobstore import JobRecord, JobStore, new_job_id
from strata.ontology import Ontology
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from strata_workers import context as worker_context_module
from strata_workers.app import create_celery
from strata_workers.tasks.knowledge import MAX_RETRIES, backoff
from tests.conftest import TEST_SECRET
from tests.gitrepo import GitRepo
from tests.integration.knowledge_docs.conftest import (
    QUEUE_V1,
    RABBIT,
    REDIS,
    Graph,
    at,
    commit_doc,
)
from tests.integration.knowledge_docs.fake_openai import FakeOpenAI, fake_openai

PATH = "docs/notes/queue.md"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai([REDIS, RABBIT]) as running:
        yield running


@pytest.fixture
def app(
    settings: Settings,
    gateway: Gateway,
    redis_server: object,
    server: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    unique: str,
) -> Iterator[Any]:
    local = settings.model_copy(
        update={
            "llm_provider": "openai",
            "llm_base_url": server.base_url,
            "llm_model": "scripted",
            "llm_timeout_s": 1.0,
            "queue_knowledge": f"knowledge-{unique}",
        }
    )
    monkeypatch.setattr(worker_context_module, "_context", None)
    yield create_celery(local)
    created = worker_context_module._context
    if created is not None:
        created.close()


@pytest.fixture
def jobs(settings: Settings, redis_server: object) -> Iterator[JobStore]:
    client = redis.Redis.from_url(settings.redis_url)
    yield JobStore(client)
    client.close()


def run(app: Any, jobs: JobStore, gateway: Gateway, docs: GitRepo, repo: str) -> JobRecord:
    """Register ``docs`` as ``repo``, commit the document, run the task; the job record."""
    RepoRegistry(gateway, ServerKeys(TEST_SECRET)).register(
        name=repo,
        provider="github",
        secret="a-webhook-secret-0123",
        path=str(docs.path),
        replace=True,
    )
    commit = commit_doc(docs, PATH, QUEUE_V1, at("2025-01-11"))
    job_id = new_job_id()
    jobs.create("knowledge.ingest", repo, job_id=job_id)
    payload = IngestJob(job_id=job_id, repo=repo, ref="refs/heads/main", commit=commit)
    app.tasks[KNOWLEDGE_INGEST].apply(kwargs={"job": payload.model_dump(mode="json")})
    return jobs.get(job_id)


def document_recorded(gateway: Gateway, ontology: Ontology, repo: str) -> bool:
    key = ontology.node("Document").make_key({"repo": repo, "path": PATH})
    return Reads(gateway, ontology).node_current("Document", key) is not None


class TestIngestTask:
    """A job moves to succeeded with its token use, or to failed with the reason."""

    def test_success_records_tokens(
        self,
        app: Any,
        jobs: JobStore,
        gateway: Gateway,
        docs: GitRepo,
        server: FakeOpenAI,
        ontology: Ontology,
        graph: Graph,
        repo_name: str,
    ) -> None:
        record = run(app, jobs, gateway, docs, repo_name)

        assert record.state == "succeeded", record.error
        assert record.result["ingested"] == 1
        assert record.result["tokens"]["total_tokens"] > 0
        assert record.progress["phase"] == "done"
        assert record.progress["total_tokens"] == record.result["tokens"]["total_tokens"]
        assert graph.totals() == (1, 2, 1)
        assert document_recorded(gateway, ontology, repo_name)
        schema = server.requests[0]["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["extracted_entities"]["maxItems"] <= 12

    def test_model_down_is_retried_then_fails(
        self,
        app: Any,
        jobs: JobStore,
        gateway: Gateway,
        docs: GitRepo,
        server: FakeOpenAI,
        ontology: Ontology,
        graph: Graph,
        repo_name: str,
    ) -> None:
        server.mode = "unavailable"
        record = run(app, jobs, gateway, docs, repo_name)

        assert record.state == "failed"
        assert record.error is not None
        assert record.error["code"] == "llm_unavailable"
        assert "503" in record.error["message"]
        assert len(server.requests) == MAX_RETRIES + 1  # one call per attempt, then it stops
        assert graph.totals() == (0, 0, 0)
        assert not document_recorded(gateway, ontology, repo_name)

    def test_model_too_slow_is_a_timeout(
        self,
        app: Any,
        jobs: JobStore,
        gateway: Gateway,
        docs: GitRepo,
        server: FakeOpenAI,
        ontology: Ontology,
        graph: Graph,
        repo_name: str,
    ) -> None:
        server.mode, server.delay_s = "slow", 2.0
        record = run(app, jobs, gateway, docs, repo_name)

        assert record.state == "failed"
        assert record.error is not None
        assert record.error["code"] == "llm_timeout"
        assert graph.totals() == (0, 0, 0)
        assert not document_recorded(gateway, ontology, repo_name)

    def test_invalid_json_fails_without_retry(
        self,
        app: Any,
        jobs: JobStore,
        gateway: Gateway,
        docs: GitRepo,
        server: FakeOpenAI,
        ontology: Ontology,
        graph: Graph,
        repo_name: str,
    ) -> None:
        server.mode = "invalid"
        record = run(app, jobs, gateway, docs, repo_name)

        assert record.state == "failed"
        assert record.error is not None
        assert record.error["code"] == "documents_failed"
        assert PATH in record.error["message"]
        assert "did not return valid JSON" in record.error["message"]
        [document] = record.error["details"]["documents"]
        assert document["code"] == "llm_invalid_output"
        assert "Celery and Redis" in document["details"]["sample"]
        assert len(server.requests) == 1
        assert graph.totals() == (0, 0, 0)
        assert not document_recorded(gateway, ontology, repo_name)


class TestBackoff:
    """Retry delays double, and stay well inside the broker's visibility timeout."""

    def test_bounded(self) -> None:
        assert [backoff(n, 7200) for n in range(6)] == [30, 60, 120, 240, 480, 600]
        assert max(backoff(n, 600) for n in range(10)) == 150

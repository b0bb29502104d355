"""Fixtures for ingesting documents through graphiti into the real Neo4j.

Documents live in throwaway git repositories; every test uses its own
repository name, so its episodes, entities and facts are its own graphiti
partition. The model is :class:`ScriptedLLMClient` unless a test says otherwise;
the embedder is the real local one.
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():  # graphiti-core 0.31.2 still uses a pydantic v1 idiom
    warnings.filterwarnings("ignore", message=r".*class-based `config` is deprecated")
    import graphiti_core.driver.search_interface.search_interface  # noqa: F401

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.git import Git
from strata.graph.gateway import Gateway
from strata.knowledge.embedder import LocalEmbedder
from strata.knowledge.facts import group_id
from strata.knowledge.ingest import IngestSummary, ingest_documents
from strata.ontology import Ontology, load_ontology
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.knowledge_docs.scripted import Edge, Scenario, ScriptedLLMClient

QUEUE_V1 = """\
---
title: Queue choice
date: 2025-01-10
---
# Queue choice

The team decided that Celery uses Redis as its message broker.
"""

QUEUE_V2 = """\
# Broker change

Date: 2025-03-01

Celery now uses RabbitMQ as its message broker instead of Redis.
"""

REDIS = Scenario(
    "Redis as its message broker",
    ["Celery", "Redis"],
    [
        Edge(
            "Celery",
            "USES_BROKER",
            "Redis",
            "Celery uses Redis as its message broker",
            "2025-01-10T00:00:00Z",
        )
    ],
)
RABBIT = Scenario(
    "RabbitMQ as its message broker",
    ["Celery", "RabbitMQ"],
    [
        Edge(
            "Celery",
            "USES_BROKER",
            "RabbitMQ",
            "Celery uses RabbitMQ as its message broker",
            "2025-03-01T00:00:00Z",
        )
    ],
    contradicts={"RabbitMQ": "Redis"},
)


@pytest.fixture(scope="session")
def ontology(settings: Settings) -> Ontology:
    return load_ontology(settings.ontology_dir)


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture
def docs(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "docs-repo")


@pytest.fixture
def repo_name(unique: str) -> str:
    # A dot and an underscore: the group id mapping is exercised on every test.
    return f"kd_{unique}.docs"


Ingest = Callable[..., IngestSummary]


@pytest.fixture
def ingest(
    settings: Settings,
    gateway: Gateway,
    ontology: Ontology,
    docs: GitRepo,
    repo_name: str,
    embedder: LocalEmbedder,
) -> Ingest:
    """Ingest ``docs`` at a commit with a scripted (or given) model."""

    def run(
        commit: str,
        llm: Any = None,
        *,
        local: Settings | None = None,
        git_path: Path | None = None,
        **kwargs: Any,
    ) -> IngestSummary:
        return ingest_documents(
            local or settings,
            gateway,
            ontology,
            git=Git(git_path or docs.path),
            repo=kwargs.pop("repo", repo_name),
            commit=commit,
            llm=llm if llm is not None else ScriptedLLMClient([REDIS, RABBIT]),
            embedder=embedder,
            **kwargs,
        )

    return run


def commit_doc(docs: GitRepo, path: str, text: str, when: datetime) -> str:
    docs.write(path, text)
    return docs.commit(f"add {path}", when)


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


class Graph:
    """Read-only looks at one partition, for assertions."""

    def __init__(self, gateway: Gateway, repo: str) -> None:
        self.gateway = gateway
        self.group = group_id(repo)

    def count(self, pattern: str) -> int:
        rows = self.gateway.read(
            f"MATCH {pattern} WHERE x.group_id = $g RETURN count(x) AS n", g=self.group
        )
        return int(rows[0]["n"])

    def totals(self) -> tuple[int, int, int]:
        return (
            self.count("(x:Episodic)"),
            self.count("(x:Entity)"),
            self.count("()-[x:RELATES_TO]->()"),
        )

    def edges(self) -> list[dict[str, Any]]:
        return self.gateway.read(
            "MATCH (a)-[x:RELATES_TO]->(b) WHERE x.group_id = $g "
            "RETURN a.name AS source, b.name AS target, x.fact AS fact, x.valid_at AS valid_at, "
            "x.invalid_at AS invalid_at, x.created_at AS created_at, x.expired_at AS expired_at "
            "ORDER BY x.created_at",
            g=self.group,
        )


@pytest.fixture
def graph(gateway: Gateway, repo_name: str) -> Graph:
    return Graph(gateway, repo_name)

"""GraphQL: `facts` as of a moment, only from readable repositories; `ingestDocuments` queues."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import GitRepo
from tests.integration.api.conftest import Api, make_api  # noqa: F401 - the fixture
from tests.integration.knowledge_docs.conftest import (
    QUEUE_V1,
    QUEUE_V2,
    Ingest,
    at,
    commit_doc,
)

FACTS = """
query F($q: String!, $repo: String, $first: Int, $asOf: AsOfInput) {
  facts(query: $q, repository: $repo, first: $first, asOf: $asOf) {
    id repository relation fact source target validAt invalidAt createdAt expiredAt
    episode document score
  }
}
"""
INGEST = """
mutation I($repo: String!, $paths: [String!]) {
  ingestDocuments(repository: $repo, paths: $paths) { id kind repo state ref after }
}
"""


def codes(response: Any) -> list[str]:
    return [e["extensions"]["code"] for e in response.json().get("errors", [])]


@pytest.fixture
def kapi(make_api: Callable[..., Any], unique: str) -> Iterator[Api]:  # noqa: F811
    with make_api(queue_knowledge=f"knowledge-{unique}") as running:
        yield running


@pytest.fixture
def two_repos(docs: GitRepo, ingest: Ingest, tmp_path: Path, unique: str) -> tuple[str, str]:
    """Repository A says Redis (then RabbitMQ); repository B only says Redis."""
    first, second = f"kda-{unique}", f"kdb-{unique}"
    ingest(commit_doc(docs, "docs/notes/queue.md", QUEUE_V1, at("2025-01-11")), repo=first)
    ingest(commit_doc(docs, "docs/notes/broker.md", QUEUE_V2, at("2025-03-02")), repo=first)
    other = GitRepo(tmp_path / "other")
    ingest(
        commit_doc(other, "notes/q.md", QUEUE_V1, at("2025-01-11")),
        repo=second,
        git_path=other.path,
    )
    return first, second


class TestFacts:
    """Extracted facts answer with their four times and source document, filtered by key."""

    def test_principal_filtering(self, kapi: Api, two_repos: tuple[str, str]) -> None:
        a, b = two_repos
        only_a = kapi.key("read", a)
        answer = kapi.gql(FACTS, only_a, {"q": "Celery broker", "first": 10}).json()
        assert {f["repository"] for f in answer["data"]["facts"]} == {a}
        assert kapi.gql(FACTS, only_a, {"q": "broker", "repo": b}).json()["data"]["facts"] == []

        both = kapi.key("read", f"{a},{b}")
        answer = kapi.gql(FACTS, both, {"q": "Celery broker", "first": 10}).json()
        assert {f["repository"] for f in answer["data"]["facts"]} == {a, b}

        everything = kapi.key("read", "*")
        answer = kapi.gql(FACTS, everything, {"q": "Celery broker", "repo": b}).json()
        assert [(f["repository"], f["target"]) for f in answer["data"]["facts"]] == [(b, "Redis")]

    def test_as_of_and_evidence(self, kapi: Api, two_repos: tuple[str, str]) -> None:
        a, _ = two_repos
        token = kapi.key("read", a)

        def targets(valid_at: str) -> list[tuple[str, str | None]]:
            variables = {"q": "Celery broker", "repo": a, "asOf": {"validAt": valid_at}}
            facts = kapi.gql(FACTS, token, variables).json()["data"]["facts"]
            return sorted((f["target"], f["document"]) for f in facts)

        assert targets("2025-02-01T00:00:00Z") == [("Redis", "docs/notes/queue.md")]
        assert targets("2025-04-01T00:00:00Z") == [("RabbitMQ", "docs/notes/broker.md")]
        past = kapi.gql(
            FACTS, token, {"q": "Redis", "repo": a, "asOf": {"validAt": "2025-02-01T00:00:00Z"}}
        ).json()["data"]["facts"]
        [fact] = [f for f in past if f["target"] == "Redis"]
        assert fact["relation"] == "USES_BROKER"
        assert fact["validAt"].startswith("2025-01-10")
        assert fact["invalidAt"].startswith("2025-03-01")
        assert fact["expiredAt"] is not None
        assert fact["createdAt"] is not None
        assert fact["episode"]
        assert fact["document"] == "docs/notes/queue.md"

    def test_bounds(self, kapi: Api, two_repos: tuple[str, str]) -> None:
        token = kapi.key("read", "*")
        too_many = kapi.gql(FACTS, token, {"q": "broker", "first": 101})
        assert codes(too_many) == ["GRAPHQL_VALIDATION_FAILED"]  # refused before it runs
        no_words = kapi.gql(FACTS, token, {"q": "!!! ???"})
        assert codes(no_words) == ["VALIDATION_ERROR"]
        assert "at least one word" in no_words.json()["errors"][0]["message"]

    def test_nobody_sees_nothing_without_read(self, kapi: Api, two_repos: tuple[str, str]) -> None:
        _a, _ = two_repos
        token = kapi.key("read", "some-other-repo")
        answer = kapi.gql(FACTS, token, {"q": "Celery broker"}).json()
        assert answer["data"]["facts"] == []


class TestIngestMutation:
    """`ingestDocuments` needs write on the repository and queues one knowledge job."""

    def test_queues_a_job(self, kapi: Api, docs: GitRepo, repo_name: str) -> None:
        sha = commit_doc(docs, "docs/notes/queue.md", QUEUE_V1, at("2025-01-11"))
        kapi.register(repo_name, path=str(docs.path))
        queue = kapi.settings.queue_knowledge

        denied = kapi.gql(INGEST, kapi.key("read", repo_name), {"repo": repo_name})
        assert codes(denied) == ["FORBIDDEN"]
        assert kapi.redis.llen(queue) == 0

        answer = kapi.gql(
            INGEST, kapi.key("write", repo_name), {"repo": repo_name, "paths": ["docs/**/*.md"]}
        ).json()
        job = answer["data"]["ingestDocuments"]
        assert job["kind"] == "knowledge.ingest"
        assert job["state"] == "QUEUED"
        assert job["after"] == sha
        assert kapi.redis.llen(queue) == 1

    def test_unregistered_repository(self, kapi: Api) -> None:
        answer = kapi.gql(INGEST, kapi.key("write", "*"), {"repo": "no-such-repo"})
        assert codes(answer) == ["NOT_FOUND"]

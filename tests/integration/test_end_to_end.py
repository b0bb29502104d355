"""End to end: a signed push webhook to the real API process, a real Celery worker,
the real Neo4j and Redis, and a callers answer that reflects the pushed commit,
while an asOf before the push still returns the old answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from celery.contrib.testing.worker import start_worker
from typer.testing import CliRunner

from strata.cli.api import ApiError
from strata.cli.main import app
from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.registry import KeyRing, RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from strata.testing import push_headers, push_payload
from strata_workers.app import create_celery
from tests.gitrepo import GitRepo

SECRET = "end-to-end-webhook-secret-0123456789"
ZERO = "0" * 40
C1 = datetime(2025, 6, 1, tzinfo=UTC)
C2 = datetime(2025, 6, 10, tzinfo=UTC)

PRICING = """\
def tax(amount):
    return amount * 0.2


def total(amount):
    return amount + tax(amount)
"""

DISCOUNT = """\


def discounted(amount):
    return total(amount) - tax(amount) / 2
"""

CALLERS = """
query($id: ID!, $asOf: AsOfInput) {
  callers(symbol: $id, depth: 1, first: 20, asOf: $asOf) { qualifiedName line resolution }
}
"""
JOB = "query($id: ID!) { job(id: $id) { state error progress } }"


@pytest.fixture
def api_url(api_process: tuple[str, Any]) -> str:
    return api_process[0]


@pytest.fixture
def worker(settings: Settings, redis_server: RedisServer) -> Iterator[Any]:
    app = create_celery(settings)
    with start_worker(
        app,
        queues=list(settings.queues.values()),
        concurrency=1,
        pool="solo",
        perform_ping_check=False,
        shutdown_timeout=60,
    ):
        yield app


def webhook(base: str, repo: str, before: str, after: str) -> httpx.Response:
    body = push_payload(repo, before, after)
    return httpx.post(
        f"{base}/webhooks/github/{repo}",
        content=body,
        timeout=10,
        headers=push_headers(body, SECRET),
    )


def gql(base: str, token: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.post(
        f"{base}/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    ).json()
    assert "errors" not in answer, answer
    data: dict[str, Any] = answer["data"]
    return data


def wait_job(base: str, token: str, job_id: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = gql(base, token, JOB, {"id": job_id})["job"]
        if job["state"] in ("SUCCEEDED", "FAILED"):
            assert job["state"] == "SUCCEEDED", job
            return job
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} did not finish")


class TestPushToAnswer:
    """A push webhook becomes an answer; the past answer stays readable as of before."""

    def test_webhook_to_callers(
        self,
        api_url: str,
        worker: Any,
        settings: Settings,
        gateway: Gateway,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"e2e-{unique}"
        repo = GitRepo(tmp_path / name)
        repo.write("app/__init__.py", "")
        repo.write("app/pricing.py", PRICING)
        c1 = repo.commit("pricing", C1)
        keys = ServerKeys(settings.secret_key.get_secret_value())
        RepoRegistry(gateway, keys).register(
            name=name, provider="github", secret=SECRET, path=str(repo.path)
        )
        _, token = KeyRing(gateway, keys).create(scopes=["read"], repos=[name])

        accepted = webhook(api_url, name, ZERO, c1)
        assert accepted.status_code == 202, accepted.text
        wait_job(api_url, token, accepted.json()["jobs"][0])
        tax = f"{name}|main|app/pricing.py|tax"
        first = gql(api_url, token, CALLERS, {"id": tax})["callers"]
        assert [c["qualifiedName"] for c in first] == ["app.pricing.total"]

        with (repo.path / "app" / "pricing.py").open("a") as handle:
            handle.write(DISCOUNT)
        c2 = repo.commit("discounts", C2)
        accepted = webhook(api_url, name, c1, c2)
        assert accepted.status_code == 202, accepted.text
        job = wait_job(api_url, token, accepted.json()["jobs"][0])
        assert job["progress"]["mode"] == "incremental"

        now = gql(api_url, token, CALLERS, {"id": tax})["callers"]
        assert sorted(c["qualifiedName"] for c in now) == [
            "app.pricing.discounted",
            "app.pricing.total",
        ]
        before = gql(
            api_url, token, CALLERS, {"id": tax, "asOf": {"validAt": "2025-06-05T00:00:00Z"}}
        )["callers"]
        assert [c["qualifiedName"] for c in before] == ["app.pricing.total"]


class TestPushWritesSearchDocuments:
    """The code worker writes a push's search documents, so no search pays for them."""

    def test_documents_exist_before_the_first_search(
        self,
        api_url: str,
        worker: Any,
        settings: Settings,
        gateway: Gateway,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"docs-{unique}"
        repo = GitRepo(tmp_path / name)
        repo.write("app/__init__.py", "")
        repo.write("app/pricing.py", PRICING)
        c1 = repo.commit("pricing", C1)
        keys = ServerKeys(settings.secret_key.get_secret_value())
        RepoRegistry(gateway, keys).register(
            name=name, provider="github", secret=SECRET, path=str(repo.path)
        )
        _, token = KeyRing(gateway, keys).create(scopes=["read"], repos=[name])
        accepted = webhook(api_url, name, ZERO, c1)
        job_id = accepted.json()["jobs"][0]
        wait_job(api_url, token, job_id)
        rows = gateway.read("MATCH (d:SearchDoc {repo: $repo}) RETURN d.name AS name", repo=name)
        assert {"tax", "total"} <= {r["name"] for r in rows}
        result = gql(api_url, token, "query($id: ID!) { job(id: $id) { result } }", {"id": job_id})
        assert result["job"]["result"]["search_documents"] == len(rows)

    def test_vectors_follow_in_the_background(
        self,
        api_url: str,
        worker: Any,
        settings: Settings,
        gateway: Gateway,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"vec-{unique}"
        repo = GitRepo(tmp_path / name)
        repo.write("app/__init__.py", "")
        repo.write("app/pricing.py", PRICING)
        c1 = repo.commit("pricing", C1)
        keys = ServerKeys(settings.secret_key.get_secret_value())
        RepoRegistry(gateway, keys).register(
            name=name, provider="github", secret=SECRET, path=str(repo.path)
        )
        _, token = KeyRing(gateway, keys).create(scopes=["read"], repos=[name])
        accepted = webhook(api_url, name, ZERO, c1)
        wait_job(api_url, token, accepted.json()["jobs"][0])
        count = (
            "MATCH (d:SearchDoc {repo: $repo}) "
            "RETURN count(d) AS docs, count(d.embedding) AS vectors"
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            row = gateway.read(count, repo=name)[0]
            if row["docs"] and row["vectors"] == row["docs"]:
                break
            time.sleep(0.5)
        assert row["docs"] > 0, row
        assert row["vectors"] == row["docs"], row  # and no search asked for them
        jobs = gql(
            api_url,
            token,
            "query($r: String!) { jobs(repository: $r) { kind state result } }",
            {"r": name},
        )["jobs"]
        embeds = [j for j in jobs if j["kind"] == "knowledge.embed"]
        assert [j["state"] for j in embeds] == ["SUCCEEDED"]
        assert embeds[0]["result"]["embedded"] == row["docs"]


class TestReindexCommand:
    """`strata reindex` queues through the API, follows the job, and reports the result."""

    def test_follows_the_job_to_the_end(
        self,
        api_url: str,
        worker: Any,
        settings: Settings,
        gateway: Gateway,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"cli-{unique}"
        repo = GitRepo(tmp_path / name)
        repo.write("app/__init__.py", "")
        repo.write("app/pricing.py", PRICING)
        c1 = repo.commit("pricing", C1)
        keys = ServerKeys(settings.secret_key.get_secret_value())
        RepoRegistry(gateway, keys).register(
            name=name, provider="github", secret=SECRET, path=str(repo.path)
        )
        _, token = KeyRing(gateway, keys).create(scopes=["read", "write"], repos=[name])
        cli = CliRunner()

        done = cli.invoke(app, ["reindex", name, "--url", api_url, "--api-key", token])
        assert done.exit_code == 0, done.output
        said = " ".join(done.output.split())  # rich wraps at the runner's 80 columns
        assert f"queued: {name} refs/heads/main at {c1[:12]}" in said
        assert f"indexed {name}: 2/2 files, 2 symbols" in said
        tax = f"{name}|main|app/pricing.py|tax"
        assert gql(api_url, token, CALLERS, {"id": tax})["callers"] == [
            {"qualifiedName": "app.pricing.total", "line": 6, "resolution": "local"}
        ]

        refused = cli.invoke(app, ["reindex", f"{name}-nope", "--url", api_url, "--api-key", token])
        assert refused.exit_code != 0
        assert isinstance(refused.exception, ApiError)
        assert "lacks the 'write' scope" in str(refused.exception)

"""End to end through a real Celery worker: requirements, links, and STALE on rename.

Pushes are simulated by sending ``strata.code.reindex`` jobs for successive
commits of a real git repository; the worker indexes the code, then syncs
requirements and decisions, then settles the trace links (the chain a webhook
starts). Everything is read back through the core's as-of reads.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from celery.contrib.testing.worker import start_worker

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.jobs import CODE_REINDEX, ReindexJob
from strata.jobstore import JobRecord, JobStore, new_job_id
from strata.ontology import load_ontology
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from strata.temporal import AsOf
from strata.trace.reads import TraceReads
from strata_workers.app import create_celery
from tests.gitrepo import GitRepo

C1 = datetime(2025, 1, 1, tzinfo=UTC)
C2 = datetime(2025, 2, 1, tzinfo=UTC)
C3 = datetime(2025, 3, 1, tzinfo=UTC)

REQUIREMENTS = """\
# Shop requirements

- [x] REQ-001: When an order is placed, the shop shall save it.
- [ ] REQ-002: The shop shall show prices with two decimals.
"""

ORDERS = """\
def save_order(order):
    return {"saved": order}
"""

RENAMED = """\
def persist_order(order):
    return {"saved": order}
"""

TESTS = """\
from app.orders import save_order


def test_save_order_req_001():
    assert save_order(1)
"""

ADR_1 = """\
# ADR-0001: Keep orders in memory
Status: accepted
Date: 2025-01-01
Constrains: REQ-001
"""

ADR_2 = """\
# ADR-0002: Keep orders in Neo4j
Status: accepted
Date: 2025-02-15
Supersedes: ADR-0001
"""


def trace_file(commit: str) -> str:
    return f"""\
feature: orders
links:
  - requirement: REQ-001
    target: app.orders.save_order
    kind: implemented_by
    status: VALIDATED
    confidence: 0.9
    methods: [review]
    evidence: reviewed by hand
    commit: {commit}
    date: 2025-02-01
"""


FABRICATED = """\
links:
  - requirement: REQ-002
    target: app.orders.save_order
    kind: implemented_by
    status: PROPOSED
    confidence: 0.5
    commit: 1234567890abcdef1234567890abcdef12345678
"""


def shop_history(
    tmp_path: Path, *, fabricated: bool, rename_tests: bool
) -> tuple[GitRepo, list[str]]:
    """Three commits: the code, then trace links and a superseding ADR, then a rename."""
    repo = GitRepo(tmp_path / "shop")
    repo.write("docs/requirements.md", REQUIREMENTS)
    repo.write("app/__init__.py", "")
    repo.write("app/orders.py", ORDERS)
    repo.write("tests/test_orders.py", TESTS)
    repo.write("docs/adr/0001-memory.md", ADR_1)
    c1 = repo.commit("orders", C1)
    repo.write("trace/orders.yml", trace_file(c1))
    if fabricated:
        repo.write("trace/fabricated.yml", FABRICATED)
    repo.write("docs/adr/0002-neo4j.md", ADR_2)
    c2 = repo.commit("trace orders", C2)
    repo.write("app/orders.py", RENAMED)
    if rename_tests:
        repo.write("tests/test_orders.py", TESTS.replace("save_order", "persist_order"))
    c3 = repo.commit("REQ-002: rename save_order to persist_order", C3)
    return repo, [c1, c2, c3]


@pytest.fixture(scope="module")
def worker_app(settings: Settings, redis_server: RedisServer, gateway: Gateway) -> Iterator[Any]:
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


def push(app: Any, settings: Settings, jobs: JobStore, repo: str, sha: str) -> str:
    job_id = new_job_id()
    jobs.create("code.reindex", repo, job_id=job_id)
    payload = ReindexJob(job_id=job_id, repo=repo, ref="refs/heads/main", after=sha)
    app.send_task(
        CODE_REINDEX,
        kwargs={"job": payload.model_dump(mode="json")},
        queue=settings.queue_code,
        task_id=job_id,
    )
    return job_id


def wait_chain(jobs: JobStore, job_id: str, timeout: float = 180) -> list[JobRecord]:
    """Follow reindex -> knowledge.sync -> trace.settle until the last one finished."""
    chain: list[JobRecord] = []
    deadline = time.monotonic() + timeout
    current = job_id
    while time.monotonic() < deadline:
        record = jobs.get(current)
        if record.state == "failed":
            raise AssertionError(f"job {record.kind} failed: {record.error}")
        if record.state == "succeeded":
            chain.append(record)
            follow = record.result.get("next_job")
            if record.kind == "code.reindex" and follow:
                current = str(follow)
                continue
            if record.kind == "knowledge.sync":
                found = [
                    j
                    for j in jobs.for_repo(record.repo, limit=50)
                    if j.kind == "trace.settle"
                    and j.params.get("after") == record.params.get("after")
                ]
                if found:
                    current = found[0].id
                    continue
            if record.kind == "trace.settle":
                return chain
        time.sleep(0.2)
    raise AssertionError(f"chain did not finish: {[c.kind for c in chain]}")


class TestStaleOnRename:
    """A validated link turns STALE when its symbol is renamed; as of before it stays VALIDATED."""

    def test_scenario(
        self,
        worker_app: Any,
        settings: Settings,
        gateway: Gateway,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"shop-{unique}"
        repo, (c1, c2, c3) = shop_history(tmp_path, fabricated=True, rename_tests=True)

        client = redis.Redis.from_url(settings.redis_url)
        jobs = JobStore(client)
        keys = ServerKeys(settings.secret_key.get_secret_value())
        RepoRegistry(gateway, keys).register(
            name=name, provider="github", secret="s" * 32, path=str(repo.path)
        )
        ontology = load_ontology(settings.ontology_dir)
        reads = TraceReads(gateway)
        req1 = ontology.node("Requirement").make_key({"repo": name, "req_id": "REQ-001"})

        for sha in (c1, c2):
            chain = wait_chain(jobs, push(worker_app, settings, jobs, name, sha))
        settle = chain[-1].result
        assert {f["rule"] for f in settle["findings"]} == {"unknown-commit"}
        assert any("1234567890ab" in f["message"] for f in settle["findings"])

        after_c2 = AsOf.at(C2 + timedelta(days=1))
        links = reads.links_from(req1, after_c2)
        statuses = {(v.type, v.target_key.split("|")[-1], v.link["status"]) for v in links}
        assert ("IMPLEMENTED_BY", "save_order", "VALIDATED") in statuses
        assert ("VERIFIED_BY", "test_save_order_req_001", "PROPOSED") in statuses
        # the fabricated commit wrote nothing: REQ-002 has no links
        req2 = ontology.node("Requirement").make_key({"repo": name, "req_id": "REQ-002"})
        assert reads.links_from(req2, after_c2) == []

        chain = wait_chain(jobs, push(worker_app, settings, jobs, name, c3))
        assert chain[0].result["mode"] == "incremental"

        now = AsOf.at()
        implemented = [v for v in reads.links_from(req1, now) if v.type == "IMPLEMENTED_BY"]
        assert len(implemented) == 1
        stale = implemented[0].link
        assert stale["status"] == "STALE"
        assert "save_order" in stale["evidence"]
        assert stale["candidate"] == "app.orders.persist_order"
        assert stale["valid_at"] == C3
        # As of before the rename it still reads VALIDATED, in both time axes.
        before = [v for v in reads.links_from(req1, after_c2) if v.type == "IMPLEMENTED_BY"]
        assert before[0].link["status"] == "VALIDATED"
        # What Strata believed when the rename was pushed (before the worker saw it).
        believed = AsOf.at(C3 + timedelta(days=1), chain[0].created_at)
        assert [
            v.link["status"] for v in reads.links_from(req1, believed) if v.type == "IMPLEMENTED_BY"
        ] == ["VALIDATED"]

        report = reads.report(name, now)
        assert [(v.type, v.target_key.split("|")[-1]) for v in report.stale] == [
            ("IMPLEMENTED_BY", "save_order")
        ]
        # A proposal is derived evidence: the renamed test's old proposal is closed, and the
        # renamed test, which still names REQ-001, proposes again.
        verifying = [
            v.target_key.split("|")[-1]
            for v in reads.links_from(req1, now)
            if v.type == "VERIFIED_BY" and v.link["status"] == "PROPOSED"
        ]
        assert verifying == ["test_persist_order_req_001"]
        # The rename's commit message names REQ-002: it proposes the symbols it touched.
        proposed = {
            (v.target_key.split("|")[-1], v.link["methods"][0]) for v in reads.links_from(req2, now)
        }
        assert ("persist_order", "commit-message") in proposed
        assert "REQ-002" not in report.unimplemented
        assert "REQ-002" in report.untested

        # The superseded decision is valid until its successor's date, and readable before.
        decisions = {d.id: d for d in reads.decisions(name, AsOf.at(C2))}
        assert decisions["ADR-0001"].state["status"] == "accepted"
        assert "ADR-0001" not in {d.id for d in reads.decisions(name, AsOf.at(C3))}
        client.close()


CURRENT_FACTS = """
MATCH (a)-[r]->(b)
WHERE a.repo = $repo AND r.valid_at IS NOT NULL AND r.expired_at IS NULL
  AND (r.invalid_at IS NULL OR r.invalid_at > datetime())
RETURN type(r) AS type, a.key AS src, b.key AS dst, properties(r) AS props
"""
TRANSACTION_FIELDS = {"created_at", "expired_at", "invalidated_at"}


def current_state(gateway: Gateway, repo: str) -> list[tuple[Any, ...]]:
    """Every fact believed now and true now, without its transaction times."""
    rows = gateway.read(CURRENT_FACTS, repo=repo)
    return sorted(
        (
            row["type"],
            row["src"],
            row["dst"],
            tuple(
                sorted((k, str(v)) for k, v in row["props"].items() if k not in TRANSACTION_FIELDS)
            ),
        )
        for row in rows
    )


class TestRebuild:
    """Dropping a repository's projection and replaying it gives the same current state."""

    def test_rebuild_equivalence(
        self,
        worker_app: Any,
        settings: Settings,
        gateway: Gateway,
        tmp_path: Path,
        unique: str,
    ) -> None:
        from strata.code.cache import ExtractCache
        from strata.code.indexer import CodeIndexer
        from strata.git import Git
        from strata.graph.reads import Reads
        from strata.graph.store import FactStore
        from strata.rebuild import rebuild

        name = f"rebuild-{unique}"
        repo, (c1, c2, c3) = shop_history(tmp_path, fabricated=False, rename_tests=False)
        client = redis.Redis.from_url(settings.redis_url)
        jobs = JobStore(client)
        RepoRegistry(gateway, ServerKeys(settings.secret_key.get_secret_value())).register(
            name=name, provider="github", secret="s" * 32, path=str(repo.path)
        )
        for sha in (c1, c2, c3):
            wait_chain(jobs, push(worker_app, settings, jobs, name, sha))
        before = current_state(gateway, name)
        assert any(t == "IMPLEMENTED_BY" and "'STALE'" in str(p) for t, _, _, p in before)

        ontology = load_ontology(settings.ontology_dir)
        indexer = CodeIndexer(
            FactStore(gateway, ontology),
            Reads(gateway, ontology),
            cache=ExtractCache(tmp_path / "cache"),
        )
        result = rebuild(gateway, ontology, indexer, Git(repo.path), repo=name, ref="main")
        assert result.commits == [c1, c2, c3]
        after = current_state(gateway, name)
        assert after == before
        client.close()

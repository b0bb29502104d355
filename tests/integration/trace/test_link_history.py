"""Link history through a real Celery worker: status round trips, churn, findings, ADRs.

One repository, pushed one commit at a time through ``strata.code.reindex``
(reindex -> knowledge.sync -> trace.settle, the chain a webhook starts):

- C1 code, requirements (one compound, one duplicated), a test, an ADR that
  constrains REQ-001;
- C2 trace links (one by ``path::qualname``) and a trace file that is refused;
- C3 a linked function and another vanish (STALE), a linked body changes (suspect);
- C4 the function is back (STALE -> PROPOSED), the refused file is removed;
- C5 the verifying test is deleted (VALIDATED -> PROPOSED); C6 it is back;
- C7 a change nothing trace-relevant (a no-op for the trace layer).

After each push the transaction time is recorded, so every read below can be
checked as of every (valid, known) instant against a reference that is written
out by hand: what was true at each commit, as known after each push.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from celery.contrib.testing.worker import start_worker

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.jobstore import JobRecord, JobStore
from strata.ontology import load_ontology
from strata.registry import KeyRing, RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from strata.temporal import AsOf, now
from strata.trace.reads import LinkView, TraceReads, findings
from strata_api.app import create_app
from strata_workers.app import create_celery
from tests.conftest import TEST_SECRET
from tests.gitrepo import GitRepo
from tests.integration.trace.test_stale_on_rename import push, wait_chain

with warnings.catch_warnings():
    # Starlette suggests httpx2 for its TestClient; httpx is what the project pins.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient

TIMES = [datetime(2025, month, 1, tzinfo=UTC) for month in range(1, 8)]  # C1..C7

REQUIREMENTS = """\
# Shop
- REQ-001: When an order is placed, the shop shall save it.
- REQ-002: The shop shall show prices with two decimals.
- REQ-003: The system shall log every login attempt and lock the account.
"""
MORE = "REQ-002: The shop shall round prices.\n"

SAVE = 'def save_order(order):\n    return {"saved": order}\n\n\n'
PRICE = "def price(amount):\n    return round(amount, 2)\n\n\n"
PRICE_CHANGED = "def price(amount):\n    return round(float(amount), 2)\n\n\n"
LEGACY = "def legacy():\n    return None\n"

TESTS = """\
from app.orders import price


def test_price_req_002():
    assert price(1.234) == 1.23
"""

ADR = """\
# ADR-0001: Keep orders in memory
Status: accepted
Date: 2025-01-01
Constrains: REQ-001
"""


def trace_file(c1: str) -> str:
    return f"""\
feature: orders
links:
  - requirement: REQ-001
    target: app.orders.save_order
    kind: implemented_by
    status: PROPOSED
    commit: {c1}
  - requirement: REQ-002
    target: app/orders.py::price
    kind: implemented_by
    status: VALIDATED
    commit: {c1}
  - requirement: REQ-001
    target: app.orders.legacy
    kind: affects
    status: PROPOSED
    commit: {c1}
"""


REFUSED = """\
links:
  - requirement: REQ-001
    target: app.orders.price
    kind: implemented_by
    commit: 1234567890abcdef1234567890abcdef12345678
"""


def history(tmp_path: Path) -> tuple[GitRepo, list[str]]:
    repo = GitRepo(tmp_path / "history")
    repo.write("docs/requirements.md", REQUIREMENTS)
    repo.write("docs/more.md", MORE)
    repo.write("app/__init__.py", "")
    repo.write("app/orders.py", SAVE + PRICE + LEGACY)
    repo.write("tests/test_orders.py", TESTS)
    repo.write("docs/adr/0001-orders.md", ADR)
    shas = [repo.commit("code", TIMES[0])]
    repo.write("trace/orders.yml", trace_file(shas[0]))
    repo.write("trace/bad_requirement.yml", REFUSED)
    shas.append(repo.commit("trace links", TIMES[1]))
    repo.write("app/orders.py", PRICE_CHANGED)
    shas.append(repo.commit("drop save_order and legacy, change price", TIMES[2]))
    repo.write("app/orders.py", SAVE + PRICE_CHANGED)
    repo.delete("trace/bad_requirement.yml")
    shas.append(repo.commit("save_order is back", TIMES[3]))
    repo.delete("tests/test_orders.py")
    shas.append(repo.commit("drop the test", TIMES[4]))
    repo.write("tests/test_orders.py", TESTS)
    shas.append(repo.commit("the test is back", TIMES[5]))
    repo.write("README.md", "A shop.\n")
    shas.append(repo.commit("readme", TIMES[6]))
    return repo, shas


# What was true at each commit (index 1 = C2 ... 6 = C7): (status, suspect).
# A declared link starts at its commit's time (C1), so C1 reads what C2 declared.
WORLD: dict[str, list[tuple[str, bool] | None]] = {
    "save_order": [
        None,
        ("PROPOSED", False),
        ("STALE", False),
        ("PROPOSED", False),
        ("PROPOSED", False),
        ("PROPOSED", False),
        ("PROPOSED", False),
    ],
    "price": [
        None,
        ("VALIDATED", False),
        ("VALIDATED", True),
        ("VALIDATED", True),
        ("PROPOSED", True),
        ("VALIDATED", True),
        ("VALIDATED", True),
    ],
}


def expected(target: str, valid: datetime, pushes: int) -> tuple[str, bool] | None:
    """The reference: the state at the latest commit <= valid among the first ``pushes``."""
    world = WORLD[target]
    known = [i for i in range(pushes) if TIMES[i] <= valid]
    if not known:
        return None
    state = world[known[-1]]
    if state is None and pushes > 1:
        state = world[1]  # declared at C2 with commit C1: valid from C1
    return state


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


@pytest.fixture(scope="module")
def pushed(
    worker_app: Any,
    settings: Settings,
    gateway: Gateway,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    """Push C1..C7 one at a time; the chains and the known time after each push."""
    name = f"links-{now().strftime('%H%M%S%f')}"
    repo, shas = history(tmp_path_factory.mktemp("links"))
    client = redis.Redis.from_url(settings.redis_url)
    jobs = JobStore(client)
    RepoRegistry(gateway, ServerKeys(settings.secret_key.get_secret_value())).register(
        name=name, provider="github", secret="s" * 32, path=str(repo.path)
    )
    known = [now()]
    chains: list[list[JobRecord]] = []
    for sha in shas:
        chains.append(wait_chain(jobs, push(worker_app, settings, jobs, name, sha)))
        known.append(now())
    client.close()
    ontology = load_ontology(settings.ontology_dir)
    key = ontology.node("Requirement").make_key
    return {
        "name": name,
        "shas": shas,
        "known": known,
        "chains": chains,
        "req": {r: key({"repo": name, "req_id": r}) for r in ("REQ-001", "REQ-002", "REQ-003")},
        "adr": ontology.node("Decision").make_key({"repo": name, "decision_id": "ADR-0001"}),
    }


def _link(views: list[LinkView], rel: str, target: str) -> LinkView | None:
    found = [v for v in views if v.type == rel and v.target_key.endswith(f"|{target}")]
    assert len(found) <= 1
    return found[0] if found else None


class TestStatusRoundTrips:
    """STALE -> PROPOSED and VALIDATED -> PROPOSED -> VALIDATED keep valid-time history."""

    def test_every_instant_on_both_axes(self, pushed: dict[str, Any], gateway: Gateway) -> None:
        reads = TraceReads(gateway)
        instants = sorted(
            {t + d for t in TIMES for d in (timedelta(0), timedelta(days=14))}
            | {TIMES[0] - timedelta(days=14)}
        )
        wrong = []
        for pushes, known_at in enumerate(pushed["known"]):
            for valid in instants:
                as_of = AsOf.at(valid, known_at)
                for req, target in (("REQ-001", "save_order"), ("REQ-002", "price")):
                    view = _link(
                        reads.links_from(pushed["req"][req], as_of), "IMPLEMENTED_BY", target
                    )
                    got = (
                        None
                        if view is None
                        else (view.link["status"], bool(view.link.get("suspect")))
                    )
                    want = expected(target, valid, pushes)
                    if got != want:
                        wrong.append((target, valid.date(), pushes, got, want))
        assert wrong == []

    def test_status_changes_close_in_valid_time(
        self, pushed: dict[str, Any], gateway: Gateway
    ) -> None:
        rows = gateway.read(
            "MATCH (q {key: $req})-[r:IMPLEMENTED_BY]->(t) WHERE t.name = 'save_order' "
            "RETURN r.status AS status, r.valid_at AS v, r.invalid_at AS i, "
            "r.expired_at AS e ORDER BY r.valid_at",
            req=pushed["req"]["REQ-001"],
        )
        got = [(r["status"], r["v"].to_native(), r["i"] and r["i"].to_native()) for r in rows]
        assert got == [
            ("PROPOSED", TIMES[0], TIMES[2]),
            ("STALE", TIMES[2], TIMES[3]),
            ("PROPOSED", TIMES[3], None),
        ]
        assert [r["e"] for r in rows] == [None, None, None]  # changes, not corrections


class TestNoChurn:
    """A push that changes nothing about a link writes nothing; STALE evidence is fixed."""

    def test_noop_push_writes_nothing(self, pushed: dict[str, Any]) -> None:
        settle = pushed["chains"][-1][-1]
        assert settle.kind == "trace.settle"
        assert (settle.result["created"], settle.result["closed"]) == (0, 0)
        assert settle.result["unchanged"] >= 4

    def test_stale_evidence_names_the_commit_it_vanished_at(
        self, pushed: dict[str, Any], gateway: Gateway
    ) -> None:
        c3 = pushed["shas"][2]
        rows = gateway.read(
            "MATCH (q {key: $req})-[r:AFFECTS]->(t) RETURN r.status AS status, "
            "r.evidence AS evidence, r.gone_commit AS gone ORDER BY r.created_at",
            req=pushed["req"]["REQ-001"],
        )
        # One version when declared, one when it turned STALE; none on the four pushes after.
        assert [r["status"] for r in rows] == ["PROPOSED", "STALE"]
        assert rows[1]["gone"] == c3
        assert c3[:12] in rows[1]["evidence"]
        view = _link(
            TraceReads(gateway).links_from(pushed["req"]["REQ-001"], AsOf.at()),
            "AFFECTS",
            "legacy",
        )
        assert view is not None
        assert view.other.get("qualified_name") == "app.orders.legacy"  # filled for STALE


class TestSuspect:
    """A changed target flags its link for review and keeps its status."""

    def test_changed_body_is_suspect(self, pushed: dict[str, Any], gateway: Gateway) -> None:
        reads = TraceReads(gateway)
        view = _link(
            reads.links_from(pushed["req"]["REQ-002"], AsOf.at()), "IMPLEMENTED_BY", "price"
        )
        assert view is not None
        assert view.link["status"] == "VALIDATED"
        assert view.link["suspect"] is True
        assert view.link["suspect_commit"] == pushed["shas"][2]
        report = reads.report(pushed["name"], AsOf.at())
        assert [v.target_key.rsplit("|", 1)[-1] for v in report.suspect] == ["price"]
        before = reads.report(pushed["name"], AsOf.at(TIMES[1] + timedelta(days=1)))
        assert before.suspect == []


class TestFindings:
    """Findings reach the job and the graph, as of any moment."""

    def test_on_the_job(self, pushed: dict[str, Any]) -> None:
        settle = pushed["chains"][1][-1]
        assert settle.progress["findings"] == len(settle.result["findings"]) >= 1
        assert {f["rule"] for f in settle.result["findings"]} == {"unknown-commit"}
        sync = pushed["chains"][0][1]
        assert sync.kind == "knowledge.sync"
        assert sync.progress["requirements"] == 3

    def test_stored_and_read_as_of(self, pushed: dict[str, Any], gateway: Gateway) -> None:
        name = pushed["name"]
        during = AsOf.at(TIMES[2] + timedelta(days=1))
        refused = findings(gateway, name, during, layer="trace", rule="unknown-commit")
        assert [(f.state["path"], f.state["severity"]) for f in refused] == [
            ("trace/bad_requirement.yml", "error")
        ]
        # The file was removed at C4: the finding is closed there.
        assert findings(gateway, name, AsOf.at(), layer="trace", rule="unknown-commit") == []
        knowledge = findings(gateway, name, AsOf.at(), layer="knowledge")
        rules = {(f.state["rule"], f.state["path"]) for f in knowledge}
        assert ("duplicate-id", "docs/requirements.md") in rules
        assert any(f.state["rule"] == "lint" and "REQ-003" in f.state["message"] for f in knowledge)
        # trace/bad_requirement.yml is a trace file, not a requirements file.
        assert all(f.state["path"] != "trace/bad_requirement.yml" for f in knowledge)

    def test_requirement_lint(self, pushed: dict[str, Any], gateway: Gateway) -> None:
        reads = TraceReads(gateway)
        compound = reads.requirement(pushed["req"]["REQ-003"], AsOf.at())
        assert compound is not None
        assert any(m.startswith("compound") for m in compound.state["lint"])
        kept = reads.requirement(pushed["req"]["REQ-002"], AsOf.at())
        assert kept is not None
        assert any(m.startswith("duplicate-id") for m in kept.state["lint"])


class TestConstrains:
    """An ADR's Constrains line is a CONSTRAINS link, read from both ends."""

    def test_adr_link(self, pushed: dict[str, Any], gateway: Gateway) -> None:
        reads = TraceReads(gateway)
        from_adr = reads.links_from(pushed["adr"], AsOf.at())
        assert [(v.type, v.target_key, v.link["status"]) for v in from_adr] == [
            ("CONSTRAINS", pushed["req"]["REQ-001"], "VALIDATED")
        ]
        of_req = reads.links_of_requirement(pushed["req"]["REQ-001"], AsOf.at())
        assert ("CONSTRAINS", pushed["adr"]) in {(v.type, v.source_key) for v in of_req}
        assert {v.type for v in of_req} == {"IMPLEMENTED_BY", "AFFECTS", "CONSTRAINS"}

    def test_path_qualname_target(self, pushed: dict[str, Any], gateway: Gateway) -> None:
        view = _link(
            TraceReads(gateway).links_from(pushed["req"]["REQ-002"], AsOf.at()),
            "IMPLEMENTED_BY",
            "price",
        )
        assert view is not None
        assert view.link["source_path"] == "trace/orders.yml"


GRAPHQL = """
query($repo: String!, $during: DateTime!, $job: ID!) {
  adr: linksFor(repository: $repo, requirement: "ADR-0001") { type target status }
  req: linksFor(repository: $repo, requirement: "REQ-001") {
    type source status qualifiedName goneCommit suspect
  }
  decisions(repository: $repo) { id constrains links { type target } }
  refused: findings(repository: $repo, kind: "unknown-commit", asOf: {validAt: $during}) {
    layer path line kind severity message
  }
  now: findings(repository: $repo, kind: "unknown-commit") { path }
  traceReport(repository: $repo) {
    suspectCount suspect { target suspectCommit } stale { qualifiedName }
  }
  job(id: $job) { kind progress result }
}
"""


class TestGraphQL:
    """The API answers links of every kind, decisions' links, findings and suspects."""

    def test_reads(self, pushed: dict[str, Any], settings: Settings, gateway: Gateway) -> None:
        _, token = KeyRing(gateway, ServerKeys(TEST_SECRET)).create(scopes=["read"], repos=["*"])
        name, req1, adr = pushed["name"], pushed["req"]["REQ-001"], pushed["adr"]
        settle = pushed["chains"][1][-1]
        with TestClient(create_app(settings)) as client:
            answer = client.post(
                "/graphql",
                json={
                    "query": GRAPHQL,
                    "variables": {
                        "repo": name,
                        "during": (TIMES[2] + timedelta(days=1)).isoformat(),
                        "job": settle.id,
                    },
                },
                headers={"Authorization": f"Bearer {token}"},
            ).json()
        assert "errors" not in answer, answer
        data = answer["data"]
        assert data["adr"] == [{"type": "CONSTRAINS", "target": req1, "status": "VALIDATED"}]
        kinds = {(link["type"], link["source"]) for link in data["req"]}
        assert ("CONSTRAINS", adr) in kinds
        [stale] = [link for link in data["req"] if link["type"] == "AFFECTS"]
        assert (stale["status"], stale["qualifiedName"]) == ("STALE", "app.orders.legacy")
        assert stale["goneCommit"] == pushed["shas"][2]
        assert data["decisions"] == [
            {
                "id": "ADR-0001",
                "constrains": ["REQ-001"],
                "links": [{"type": "CONSTRAINS", "target": req1}],
            }
        ]
        assert [(f["layer"], f["path"], f["severity"]) for f in data["refused"]] == [
            ("trace", "trace/bad_requirement.yml", "error")
        ]
        assert data["now"] == []
        assert data["traceReport"]["stale"] == [{"qualifiedName": "app.orders.legacy"}]
        assert data["traceReport"]["suspectCount"] == 1
        assert data["traceReport"]["suspect"][0]["suspectCommit"] == pushed["shas"][2]
        job = data["job"]
        assert job["kind"] == "trace.settle"
        assert job["progress"]["findings"] == 1
        assert [f["rule"] for f in job["result"]["findings"]] == ["unknown-commit"]

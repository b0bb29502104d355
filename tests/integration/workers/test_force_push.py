"""A force push back (or to unrelated history) and a branch deletion, through the real
API and a real prefork worker: what the ref left closes at the moment it moved, the
new state is current, nothing is deleted, and as of before the move the old state reads."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.registry import KeyRing, RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.workers.stack import (
    SECRET,
    ZERO,
    api_process,
    gql,
    push,
    stack_settings,
    wait_job,
    worker_process,
)

C0 = datetime(2025, 5, 1, tzinfo=UTC)
C1 = datetime(2025, 6, 1, tzinfo=UTC)
C2 = datetime(2025, 6, 10, tzinfo=UTC)
BETWEEN = "2025-06-20T00:00:00Z"  # after c2's time, before any push of this test

PRICING = (
    "def tax(amount):\n    return amount * 0.2\n\n\n"
    "def total(amount):\n    return amount + tax(amount)\n"
)
DISCOUNT = "\n\ndef discounted(amount):\n    return total(amount) - tax(amount) / 2\n"

CALLERS = """
query($id: ID!, $asOf: AsOfInput) {
  callers(symbol: $id, depth: 1, first: 20, asOf: $asOf) { qualifiedName }
}
"""
SYMBOL = "query($id: ID!, $asOf: AsOfInput) { symbol(id: $id, asOf: $asOf) { qualname } }"
HISTORY = "query($id: ID!) { history(id: $id) { validAt invalidAt } }"
BRANCHES = """
query($name: String!, $asOf: AsOfInput) {
  repository(name: $name, asOf: $asOf) { branches { ref head } }
}
"""


@pytest.fixture
def stack(
    unique: str, gateway: Gateway, redis_server: RedisServer, tmp_path: Path
) -> Iterator[tuple[Settings, str]]:
    settings = stack_settings(unique)
    with api_process(settings) as base, worker_process(settings, tmp_path):
        yield settings, base


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _callers(base: str, token: str, key: str, valid_at: str | None = None) -> list[str]:
    as_of = {"validAt": valid_at} if valid_at else None
    found = gql(base, token, CALLERS, {"id": key, "asOf": as_of})["callers"]
    return sorted(c["qualifiedName"] for c in found)


def _heads(base: str, token: str, name: str, valid_at: str | None = None) -> dict[str, str]:
    as_of = {"validAt": valid_at} if valid_at else None
    repo = gql(base, token, BRANCHES, {"name": name, "asOf": as_of})["repository"]
    return {b["ref"]: b["head"] for b in repo["branches"]} if repo else {}


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


class TestForcePushAndDeletion:
    """History is rewritten by pushes, never by deleting facts."""

    def test_rewind_then_unrelated_history_then_deletion(
        self,
        stack: tuple[Settings, str],
        gateway: Gateway,
        tmp_path: Path,
        unique: str,
    ) -> None:
        settings, base = stack
        name = f"force-{unique}"
        repo = GitRepo(tmp_path / name)
        repo.write("app/__init__.py", "")
        repo.write("app/pricing.py", PRICING)
        c1 = repo.commit("pricing", C1)
        repo.write("app/pricing.py", PRICING + DISCOUNT)
        c2 = repo.commit("discounts", C2)
        keys = ServerKeys(settings.secret_key.get_secret_value())
        RepoRegistry(gateway, keys).register(
            name=name, provider="github", secret=SECRET, path=str(repo.path)
        )
        _, token = KeyRing(gateway, keys).create(scopes=["read"], repos=[name])
        assert (
            wait_job(base, token, push(base, name, ZERO, c1), timeout=120)["state"] == "SUCCEEDED"
        )
        assert wait_job(base, token, push(base, name, c1, c2), timeout=120)["state"] == "SUCCEEDED"
        tax = f"{name}|main|app/pricing.py|tax"
        discounted = f"{name}|main|app/pricing.py|discounted"
        assert _callers(base, token, tax) == ["app.pricing.discounted", "app.pricing.total"]

        # 1. A force push back to c1 (an ancestor of the indexed head).
        repo._git("reset", "-q", "--hard", c1)
        pushed = datetime.now(UTC)
        job = wait_job(base, token, push(base, name, c2, c1, forced=True), timeout=120)
        done = datetime.now(UTC)
        assert job["state"] == "SUCCEEDED", job
        assert job["progress"]["rewind"] is True
        assert _callers(base, token, tax) == ["app.pricing.total"]
        assert gql(base, token, SYMBOL, {"id": discounted, "asOf": None})["symbol"] is None
        assert _heads(base, token, name) == {"main": c1}
        # As of before the push, c2's state still reads (valid time and belief).
        assert _callers(base, token, tax, BETWEEN) == [
            "app.pricing.discounted",
            "app.pricing.total",
        ]
        assert _heads(base, token, name, _iso(pushed - timedelta(seconds=1))) == {"main": c2}
        # The abandoned version closed when the ref moved, not at a commit's time.
        [version] = gql(base, token, HISTORY, {"id": discounted})["history"]
        assert _when(version["validAt"]) == C2
        closed = _when(version["invalidAt"])
        assert pushed - timedelta(seconds=1) <= closed <= done

        rewound_at = datetime.now(UTC)  # a moment of c1's restored state
        rewound = _iso(rewound_at)
        time.sleep(0.01)

        # 2. A force push to unrelated history, committed before everything else.
        repo._git("checkout", "-q", "--orphan", "rewrite")
        repo._git("rm", "-rq", "--cached", ".")
        (repo.path / "app" / "pricing.py").unlink()
        repo.write("app/other.py", "def tax(x):\n    return x\n\n\ndef use():\n    return tax(1)\n")
        c3 = repo.commit("rewritten", C0)
        repo._git("branch", "-f", "main", c3)
        moved = datetime.now(UTC)
        job = wait_job(base, token, push(base, name, c1, c3, forced=True), timeout=120)
        assert job["state"] == "SUCCEEDED", job
        assert job["progress"]["rewind"] is True
        assert gql(base, token, SYMBOL, {"id": tax, "asOf": None})["symbol"] is None
        other_tax = f"{name}|main|app/other.py|tax"
        assert _callers(base, token, other_tax) == ["app.other.use"]
        assert _heads(base, token, name) == {"main": c3}
        assert rewound_at < moved
        assert _callers(base, token, tax, rewound) == ["app.pricing.total"]
        assert _callers(base, token, other_tax, rewound) == []  # new facts start at the move
        rewritten_at = datetime.now(UTC)  # a moment of c3's state
        rewritten = _iso(rewritten_at)
        time.sleep(0.01)

        # 3. The branch is deleted (a push with after = zeros, through the webhook):
        # its facts close at the deletion.
        deleted = datetime.now(UTC)
        job = wait_job(base, token, push(base, name, c3, ZERO), timeout=120)
        assert job["state"] == "SUCCEEDED", job
        assert job["progress"]["mode"] == "deleted"
        assert _heads(base, token, name) == {}
        assert gql(base, token, SYMBOL, {"id": other_tax, "asOf": None})["symbol"] is None
        assert rewritten_at < deleted
        assert _callers(base, token, other_tax, rewritten) == ["app.other.use"]
        assert _heads(base, token, name, rewritten) == {"main": c3}
        # Nothing was deleted from the graph: every version is still there.
        assert len(gql(base, token, HISTORY, {"id": discounted})["history"]) == 1
        again = wait_job(base, token, push(base, name, c3, ZERO), timeout=120)
        assert again["progress"]["mode"] == "unchanged"

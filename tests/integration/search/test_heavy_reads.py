"""Searches and context packs run in the API's heavy-read processes, not in its own:
the same answers, a process that dies is replaced, and 0 workers keeps them in process."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

from strata_api.heavy import NICE, HeavyReads
from tests.integration.api.conftest import Api
from tests.integration.search.conftest import Indexed

SEARCH = """query($q: String!, $r: String!) {
  search(query: $q, repository: $r) { hits(first: 3) { qualifiedName evidence { commit } } } }"""
# These tests are about where a read runs, not how fast: a budget a loaded machine meets.
POOLED = {"api_heavy_workers": 1, "request_timeout_s": 120.0}
CONTEXT = """query($t: String!, $r: String!) {
  context(task: $t, repository: $r) { intent sufficient tokens } }"""


def hits(api: Api, repo: str, query: str = "refund money") -> list[str]:
    body = api.gql(SEARCH, api.key(), {"q": query, "r": repo}).json()
    assert "errors" not in body, body
    return [h["qualifiedName"] for h in body["data"]["search"]["hits"]]


def heavy(api: Api) -> HeavyReads:
    found: HeavyReads = api.client.app.state.heavy  # type: ignore[attr-defined]
    return found


def started(api: Api, timeout: float = 180) -> None:
    """Wait for the pool (its processes import Strata and load the embedder)."""
    deadline = time.monotonic() + timeout
    while not heavy(api).ready():
        assert time.monotonic() < deadline, "the heavy-read pool did not start"
        time.sleep(0.1)


def alive(pid: int, timeout: float) -> bool:
    """Whether ``pid`` still exists after waiting up to ``timeout`` for it to end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.05)
    return True


def pool_pids(api: Api) -> list[int]:
    pool = heavy(api)._pool
    assert pool is not None, "no heavy-read pool was started"
    return [p.pid for p in pool._processes.values() if p.pid is not None]


class TestHeavyReads:
    """A search answers from another, lower-priority process; the API's own stays free."""

    def test_search_runs_in_a_niced_pool_process(
        self, make_api: Callable[..., Any], shop: Indexed
    ) -> None:
        with make_api(**POOLED) as api:
            started(api)
            assert hits(api, shop.repo)[0] == "billing.payments.PaymentGateway.refund"
            [pid] = pool_pids(api)
            assert pid != os.getpid()
            assert os.getpriority(os.PRIO_PROCESS, pid) >= NICE
            body = api.gql(CONTEXT, api.key(), {"t": "explain refund", "r": shop.repo}).json()
            assert "errors" not in body, body
            assert body["data"]["context"]["tokens"] > 0
            assert pool_pids(api) == [pid]  # the same process served the pack
        started_at = time.monotonic()  # the app has shut down: its pool is gone, at once
        assert not alive(pid, timeout=10), "the pool process outlived the app"
        assert time.monotonic() - started_at < 10

    def test_a_killed_pool_process_is_replaced(
        self, make_api: Callable[..., Any], shop: Indexed
    ) -> None:
        with make_api(**POOLED) as api:
            started(api)
            before = hits(api, shop.repo)
            [pid] = pool_pids(api)
            os.kill(pid, signal.SIGKILL)
            assert not alive(pid, timeout=10)
            assert hits(api, shop.repo) == before  # answered here while a new pool starts
            started(api)
            assert pool_pids(api) != [pid]
            assert hits(api, shop.repo) == before

    def test_zero_workers_answers_the_same_in_process(
        self, make_api: Callable[..., Any], shop: Indexed
    ) -> None:
        with make_api(**POOLED) as pooled:
            started(pooled)
            # A search embeds a few pending documents: ask until the answer is settled.
            expected = hits(pooled, shop.repo, "charge card")
            for _ in range(5):
                again = hits(pooled, shop.repo, "charge card")
                if again == expected:
                    break
                expected = again
        with make_api(**POOLED | {"api_heavy_workers": 0}) as api:
            assert hits(api, shop.repo, "charge card") == expected
            assert heavy(api)._pool is None

    def test_bad_input_is_still_a_validation_error(
        self, make_api: Callable[..., Any], shop: Indexed
    ) -> None:
        with make_api(**POOLED) as api:
            started(api)
            body = api.gql(SEARCH, api.key(), {"q": "", "r": shop.repo}).json()
            assert body["errors"][0]["extensions"]["code"] == "VALIDATION_ERROR"
            body = api.gql(SEARCH, api.key(), {"q": "refund", "r": "no-such-repo"}).json()
            assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"

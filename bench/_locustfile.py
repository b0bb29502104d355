"""The user bench/load.py runs under locust: reads of one indexed repository and
signed push webhooks, named per request type so locust reports each apart (and
tagged with it, so ``--tags symbol`` runs one type alone).

Configured by the environment bench/load.py sets (LOAD_TOKEN, LOAD_REPO,
LOAD_SHA, LOAD_SYMBOLS, LOAD_SECRET); not meant to be run by hand.
"""

from __future__ import annotations

import os
import random
from typing import Any

from locust import FastHttpUser, between, tag, task

from strata.testing import ZERO_SHA, push_headers, push_payload

TOKEN = os.environ.get("LOAD_TOKEN", "")
REPO = os.environ.get("LOAD_REPO", "")
SHA = os.environ.get("LOAD_SHA", "")
SYMBOLS = [s for s in os.environ.get("LOAD_SYMBOLS", "").split(",") if s]
SECRET = os.environ.get("LOAD_SECRET", "").encode()
WORDS = ["helper", "Thing", "run", "main", "value", "module"]

SYMBOL = "query($id: ID!) { symbol(id: $id) { qualifiedName kind evidence { path lineStart } } }"
CALLERS = "query($id: ID!) { callers(symbol: $id, depth: 2, first: 10) { qualifiedName depth } }"
CALLEES = "query($id: ID!) { callees(symbol: $id, depth: 2, first: 10) { qualifiedName depth } }"
CONTEXT = (
    "query($t: String!, $repo: String!) { context(task: $t, repository: $repo) "
    "{ intent sufficient tokens } }"
)
TASKS = ["who calls {}?", "tests for {}", "explain {}", "what breaks if I change {}"]
IMPACT = (
    "query($id: ID!) { impact(symbol: $id) { entrypoints { qualifiedName } "
    "tests { qualifiedName } } }"
)
SEARCH = (
    "query($q: String!, $repo: String!) { search(query: $q, repository: $repo) "
    "{ hits(first: 10) { id score } } }"
)


class StrataUser(FastHttpUser):
    wait_time = between(0.0, 0.05)

    def _graphql(self, name: str, query: str, variables: dict[str, Any]) -> None:
        with self.client.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {TOKEN}"},
            name=name,
            catch_response=True,
        ) as response:
            if response.status_code != 200:
                response.failure(f"HTTP {response.status_code}")
                return
            body = response.json()
            if body.get("errors"):  # a GraphQL error is a failed request too
                response.failure(str(body["errors"])[:200])

    @tag("symbol")
    @task(4)
    def symbol(self) -> None:
        self._graphql("symbol", SYMBOL, {"id": random.choice(SYMBOLS)})

    @tag("callers")
    @task(3)
    def callers(self) -> None:
        self._graphql("callers", CALLERS, {"id": random.choice(SYMBOLS)})

    @tag("callees")
    @task(2)
    def callees(self) -> None:
        self._graphql("callees", CALLEES, {"id": random.choice(SYMBOLS)})

    @tag("context")
    @task(1)
    def context_pack(self) -> None:  # not `context`: locust users have a context()
        name = random.choice(SYMBOLS).rsplit("|", 1)[-1]
        self._graphql("context", CONTEXT, {"t": random.choice(TASKS).format(name), "repo": REPO})

    @tag("impact")
    @task(2)
    def impact(self) -> None:
        self._graphql("impact", IMPACT, {"id": random.choice(SYMBOLS)})

    @tag("search")
    @task(2)
    def search(self) -> None:
        self._graphql("search", SEARCH, {"q": random.choice(WORDS), "repo": REPO})

    @tag("push")
    @task(1)
    def push(self) -> None:
        # A (re)created branch at the indexed commit.
        body = push_payload(REPO, ZERO_SHA, SHA)
        with self.client.post(
            f"/webhooks/github/{REPO}",
            data=body.decode(),
            headers=push_headers(body, SECRET),
            name="push",
            catch_response=True,
        ) as response:
            if response.status_code not in (200, 202):
                response.failure(f"HTTP {response.status_code}")

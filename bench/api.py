"""Benchmark of the GraphQL API over HTTP on a 100k+ line repository.

Indexes the ``django/`` package of Django 5.1.4 (as bench/index.py does) into
the STRATA_* Neo4j unless it is already there, starts its own API process
(uvicorn, one process, rate limit lifted) on the same Neo4j and Redis, and
drives it with concurrent clients. In one run it measures a symbol lookup,
callers at depth 1 and depth 3, the asOf variant of each, and the webhook
accept latency (signed GitHub push, answered 202).

    .venv/bin/python bench/api.py [--clients 2] [--requests 400]

Targets (2 cores): symbol lookup p50 <= 5 ms, p99 <= 25 ms; callers depth 3
p99 <= 50 ms; asOf within 1.5x of its current-state twin; webhook p99 <= 20 ms.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import random
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import index as django  # the sdist, repo and indexing helpers of bench/index.py

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.devstack.api import launch_api
from strata.devstack.neo4j import Neo4jServer
from strata.devstack.procs import free_port
from strata.devstack.redis import RedisServer
from strata.errors import EnvironmentProblem
from strata.git import Git
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import load_ontology
from strata.registry import KeyRing, RepoRegistry
from strata.security import ServerKeys
from strata.settings import load_settings

REPO = "bench-api-django"
SECRET = "bench-api-webhook-secret-0123456789"  # noqa: S105 - a throwaway local bench secret
SYMBOL = "query($id: ID!, $asOf: AsOfInput) { symbol(id: $id, asOf: $asOf) { qualifiedName kind } }"
CALLERS = """query($id: ID!, $depth: Int!, $asOf: AsOfInput) {
  callers(symbol: $id, depth: $depth, first: 10, asOf: $asOf) { qualifiedName depth line }
}"""
SAMPLE = """
MATCH (s:Symbol)<-[c:CALLS]-()
WHERE s.repo = $repo AND c.expired_at IS NULL AND c.invalid_at IS NULL
RETURN DISTINCT s.key AS key LIMIT 2000
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ensure_indexed(gateway: Gateway) -> str:
    """Index Django once (kept for later runs); return the head commit."""
    settings = load_settings()
    ontology = load_ontology(settings.ontology_dir)
    repo_path = django.CACHE / "django-repo"
    if not (repo_path / ".git").exists():
        repo_path = django.make_repo(django.fetch_sdist())
    head = django.git(repo_path, "rev-parse", "HEAD")
    indexer = CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(django.CACHE / "extracts-api"),
    )
    result = indexer.index(Git(repo_path), REPO, "main", head)
    print(
        f"repository {REPO}: {result.mode} index of {head[:12]} "
        f"({result.lines:,} lines) in {result.seconds['total']:.1f}s"
    )
    keys = ServerKeys(settings.secret_key.get_secret_value())
    RepoRegistry(gateway, keys).register(
        name=REPO, provider="github", secret=SECRET, path=str(repo_path), replace=True
    )
    return head


def start_api(port: int) -> subprocess.Popen[bytes]:
    env = {"STRATA_RATE_LIMIT_PER_MINUTE": "100000000", "STRATA_LOG_LEVEL": "WARNING"}
    try:
        return launch_api("127.0.0.1", port, env=env, log_level="warning")
    except EnvironmentProblem as exc:
        raise SystemExit(f"the API did not start: {exc}") from exc


def measure(
    client: httpx.Client, clients: int, requests: int, build: Any
) -> tuple[list[float], float]:
    """Send ``requests`` requests from ``clients`` threads; latencies (ms) and req/s."""

    def one(i: int) -> float:
        url, kwargs = build(i)
        started = time.perf_counter()
        response = client.post(url, **kwargs)
        elapsed = (time.perf_counter() - started) * 1000
        answer = response.json() if response.status_code == 200 else {}
        if response.status_code not in (200, 202) or "errors" in answer:
            raise SystemExit(f"unexpected answer {response.status_code}: {response.text[:300]}")
        return elapsed

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        latencies = list(pool.map(one, range(requests)))
    return latencies, requests / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    settings = load_settings()
    neo4j = Neo4jServer.from_settings(settings)
    if settings.neo4j_uri == neo4j.uri:
        neo4j.start()
    RedisServer.from_settings(settings).start()
    rng = random.Random(11)
    with Gateway.connect(settings) as gateway:
        migrations.migrate(gateway, settings.migrations_dir)
        head = ensure_indexed(gateway)
        keys = [row["key"] for row in gateway.read(SAMPLE, repo=REPO)]
        _, token = KeyRing(gateway, ServerKeys(settings.secret_key.get_secret_value())).create(
            scopes=["read"], repos=[REPO], name="bench-api"
        )
    port = free_port()
    api = start_api(port)
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}"}
    past = {"validAt": "2024-12-05T00:00:00Z"}  # after the indexed commit's time
    print(
        f"{len(keys)} symbols with callers sampled; {args.clients} clients x "
        f"{args.requests} requests per case"
    )
    cases: list[tuple[str, Any]] = []
    for label, query, extra in (
        ("symbol lookup", SYMBOL, {}),
        ("callers depth 1", CALLERS, {"depth": 1}),
        ("callers depth 3", CALLERS, {"depth": 3}),
    ):
        # One stream per pair: even requests now, odd ones asOf, so both meet the same load.
        def build(i: int, q: str = query, e: dict[str, Any] = extra) -> tuple[str, dict[str, Any]]:
            variables = {"id": rng.choice(keys), "asOf": past if i % 2 else None, **e}
            return f"{base}/graphql", {
                "json": {"query": q, "variables": variables},
                "headers": headers,
            }

        cases.append((label, build))
    results: dict[str, tuple[float, float, float, float]] = {}
    try:
        with httpx.Client(timeout=30) as client:
            for _, build in cases:  # warm-up: plans and caches
                measure(client, args.clients, 50, build)
            for label, build in cases:
                lat, rate = measure(client, args.clients, 2 * args.requests, build)
                for name, part in ((label, lat[0::2]), (label + " asOf", lat[1::2])):
                    results[name] = (
                        statistics.median(part),
                        percentile(part, 0.95),
                        percentile(part, 0.99),
                        rate / 2,
                    )

            def webhook(i: int) -> tuple[str, dict[str, Any]]:
                body = json.dumps(
                    {"ref": "refs/heads/main", "before": head, "after": head, "forced": False}
                ).encode()
                signature = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
                return f"{base}/webhooks/github/{REPO}", {
                    "content": body,
                    "headers": {
                        "Content-Type": "application/json",
                        "X-GitHub-Event": "push",
                        "X-GitHub-Delivery": str(uuid.uuid4()),
                        "X-Hub-Signature-256": f"sha256={signature}",
                    },
                }

            lat, rate = measure(client, args.clients, min(args.requests, 200), webhook)
            results["webhook accept"] = (
                statistics.median(lat),
                percentile(lat, 0.95),
                percentile(lat, 0.99),
                rate,
            )
    finally:
        api.terminate()
        api.wait(timeout=20)
    print(f"{'case':<22}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'req/s':>9}")
    for label, (p50, p95, p99, rate) in results.items():
        print(f"{label:<22}{p50:>9.2f}{p95:>9.2f}{p99:>9.2f}{rate:>9.0f}")
    for label in ("symbol lookup", "callers depth 1", "callers depth 3"):
        ratio = results[label + " asOf"][0] / results[label][0]
        print(f"asOf / current ({label}): p50 {ratio:.2f}x")
    sym, deep = results["symbol lookup"], results["callers depth 3"]
    hook = results["webhook accept"]
    print(
        "targets: symbol p50 <= 5 ms: "
        + ("met" if sym[0] <= 5 else "NOT met")
        + f"; symbol p99 <= 25 ms: {'met' if sym[2] <= 25 else 'NOT met'}"
        + f"; depth-3 p99 <= 50 ms: {'met' if deep[2] <= 50 else 'NOT met'}"
        + f"; webhook p99 <= 20 ms: {'met' if hook[2] <= 20 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()

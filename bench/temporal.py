"""Benchmark of the bitemporal store on the real Neo4j.

Builds >= 1M fact versions (N entities, each asserted once then changed C
times; every change closes the open version in place and creates one), then
measures in the same run the latency of an as-of point lookup (random entity,
random past valid and known time) and of a current-state lookup (random
entity), both through the gateway (driver round trip included).

    .venv/bin/python bench/temporal.py                # 100k entities x (1 + 9 changes)
    .venv/bin/python bench/temporal.py --entities 20000 --changes 4   # quicker

It uses the Neo4j named by the STRATA_* settings (the local dev stack by
default; started if it is not running) and deletes its own data afterwards
unless --keep is given.

Prints the write throughput per round and its median, and the CPU each fact
version cost this process and, when the Neo4j is the local one, the database
(on a loaded machine wall time says little; CPU per fact says where it goes).

Targets (2 cores): >= 20k facts/s written; as-of p50 <= 2 ms; as-of <= 1.5x current.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _proc import stat_cpu_s  # bench/_proc.py

from strata.devstack.neo4j import Neo4jServer
from strata.facts import StateFact
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import load_ontology
from strata.settings import load_settings
from strata.temporal import AsOf
from strata.writers import CodeWriter

DAY0 = datetime(2024, 1, 1, tzinfo=UTC)


def identity(repo: str, i: int) -> dict[str, Any]:
    return {
        "repo": repo,
        "ref": "main",
        "path": f"pkg/m{i // 50}.py",
        "qualname": f"f{i}",
        "name": f"f{i}",
    }


def props(i: int, version: int) -> dict[str, Any]:
    return {
        "kind": "function",
        "qualified_name": f"pkg.m{i // 50}.f{i}",
        "line_start": 10 + version,
        "line_end": 20 + version,
        "body_hash": f"{i:x}-{version}",
        "language": "python",
        "signature": f"def f{i}(a, b={version})",
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=9)
    parser.add_argument("--batch", type=int, default=5_000)
    parser.add_argument("--samples", type=int, default=2_000)
    parser.add_argument("--workers", type=int, default=2, help="concurrent write transactions")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark's data")
    args = parser.parse_args()

    settings = load_settings()
    server = Neo4jServer.from_settings(settings)
    if settings.neo4j_uri == server.uri:
        server.start()
    ontology = load_ontology(settings.ontology_dir)
    repo = f"bench-temporal-{uuid.uuid4().hex[:8]}"
    local = server.proc.pid() if settings.neo4j_uri == server.uri else None
    with Gateway.connect(settings) as gateway:
        migrations.migrate(gateway, settings.migrations_dir)
        store = FactStore(gateway, ontology)
        reads = Reads(gateway, ontology)
        try:
            run(args, repo, store, reads, gateway, neo4j_pid=local)
        finally:
            if not args.keep:
                cleanup(gateway, repo)


def process_cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of process ``pid`` so far (0 when unknown)."""
    if pid is None:
        return 0.0
    try:
        return stat_cpu_s(Path(f"/proc/{pid}/stat"))
    except OSError:
        return 0.0


def write_rounds(
    args: argparse.Namespace, repo: str, store: FactStore, gateway: Gateway, neo4j_pid: int | None
) -> tuple[float, list[datetime]]:
    """Write every round; print its throughput; the median rate and each round's end."""
    n, changes = args.entities, args.changes
    print(
        f"building {n} entities x (1 + {changes} changes) in batches of {args.batch}, "
        f"{args.workers} concurrent transactions ..."
    )
    created = expired = 0
    write_seconds = 0.0
    own_cpu = db_cpu = 0.0
    rates: list[float] = []
    tx_times: list[datetime] = []
    for round_no in range(changes + 1):
        valid = DAY0 + timedelta(days=30 * round_no)
        round_started = time.perf_counter()
        batches = (
            [
                StateFact(
                    "Symbol",
                    identity(repo, i),
                    props(i, round_no),
                    valid,
                    scope=f"{repo}|pkg/m{i // 50}.py",
                )
                for i in range(start, min(n, start + args.batch))
            ]
            for start in range(0, n, args.batch)
        )
        t, cpu, db = time.perf_counter(), time.process_time(), process_cpu_s(neo4j_pid)
        result = CodeWriter(store).write_many(batches, workers=args.workers)
        seconds = time.perf_counter() - t
        write_seconds += seconds
        own_cpu += time.process_time() - cpu
        db_cpu += process_cpu_s(neo4j_pid) - db
        rates.append(result.created / seconds)
        created += result.created
        expired += result.expired
        tx_times.append(datetime.now(UTC))
        print(
            f"  round {round_no}: {time.perf_counter() - round_started:6.1f}s, "
            f"{result.created / seconds:,.0f} versions/s, {created:,} versions so far"
        )
    versions = gateway.read(
        "MATCH (n:Symbol {repo: $repo})-[r:STATE]->(n) RETURN count(r) AS c", repo=repo
    )[0]["c"]
    print(f"stored fact versions: {versions:,} (created {created:,}, expired {expired:,})")
    rate = statistics.median(rates)
    print(
        f"write throughput: median {rate:,.0f} fact versions/s per round "
        f"(first round {rates[0]:,.0f}/s: new slots; later rounds close one version and "
        f"create one); overall {created / write_seconds:,.0f}/s over {write_seconds:.1f}s"
    )
    db_note = f", Neo4j {db_cpu / created * 1e6:.0f} us" if neo4j_pid is not None else ""
    print(f"CPU per fact version: this process {own_cpu / created * 1e6:.0f} us{db_note}")
    return rate, tx_times


def run(
    args: argparse.Namespace,
    repo: str,
    store: FactStore,
    reads: Reads,
    gateway: Gateway,
    *,
    neo4j_pid: int | None = None,
) -> None:
    n, changes = args.entities, args.changes
    rate, tx_times = write_rounds(args, repo, store, gateway, neo4j_pid)

    rng = random.Random(7)
    keys = [store.ontology.node("Symbol").make_key(identity(repo, i)) for i in range(n)]
    for key in keys[:200]:  # warm up plans and caches
        reads.node_current("Symbol", key)
        reads.node_state("Symbol", key, AsOf.at(DAY0 + timedelta(days=45), tx_times[1]))
    as_of_ms: list[float] = []
    current_ms: list[float] = []
    misses = 0
    for _ in range(args.samples):
        key = rng.choice(keys)
        round_no = rng.randrange(changes + 1)
        valid_at = DAY0 + timedelta(days=30 * round_no + rng.randrange(30))
        known_at = tx_times[rng.randrange(round_no, changes + 1)]
        t = time.perf_counter()
        found = reads.node_state("Symbol", key, AsOf.at(valid_at, known_at))
        as_of_ms.append((time.perf_counter() - t) * 1000)
        misses += found is None
        t = time.perf_counter()
        current = reads.node_current("Symbol", key)
        current_ms.append((time.perf_counter() - t) * 1000)
        misses += current is None
    a50, a99 = statistics.median(as_of_ms), percentile(as_of_ms, 0.99)
    c50, c99 = statistics.median(current_ms), percentile(current_ms, 0.99)
    print(f"as-of point lookup:   p50 {a50:.2f} ms  p99 {a99:.2f} ms  ({args.samples} samples)")
    print(f"current-state lookup: p50 {c50:.2f} ms  p99 {c99:.2f} ms  ({args.samples} samples)")
    print(f"as-of / current ratio: p50 {a50 / c50:.2f}x  p99 {a99 / c99:.2f}x")
    print(f"lookups that found nothing (must be 0): {misses}")
    print(
        "targets: write >= 20,000/s: "
        + ("met" if rate >= 20_000 else "NOT met")
        + f"; as-of p50 <= 2 ms: {'met' if a50 <= 2 else 'NOT met'}"
        + f"; ratio <= 1.5x: {'met' if a50 / c50 <= 1.5 else 'NOT met'}"
    )


def cleanup(gateway: Gateway, repo: str) -> None:
    """Remove the benchmark's own repository (bench data only)."""
    gateway.run_autocommit(
        "MATCH (n:Symbol {repo: $repo}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS",
        repo=repo,
        timeout=3600,
    )


if __name__ == "__main__":
    main()

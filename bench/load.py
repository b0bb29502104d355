"""Load on a real API: reads and push webhooks at 1, 4 and 16 clients, limits, a soak.

Starts Neo4j and Redis on ports of their own (bench/_stack.py, data under
bench/.cache/load), a real API and one prefork code worker, indexes a generated
repository of ``--files`` modules through a push, then:

1. for each client count in ``--levels`` (default 1,4,16), runs locust headless
   (bench/_locustfile.py: symbol, callers, callees, impact, search, context
   packs and signed push webhooks, weighted 4:3:2:2:2:1:1) for ``--seconds`` and prints requests,
   failures, p50 and p99 per request type;
2. shows the per-key rate limit engages: a second API with
   STRATA_RATE_LIMIT_PER_MINUTE=``--limit`` answers one key's excess with 429
   while another key still gets 200;
3. sends a burst of 500 identical deliveries (one delivery id) at once and
   counts the jobs the repository got (must be exactly one);
4. with ``--soak MINUTES``, runs 4 clients for that long, samples API and worker
   RSS and Redis/Neo4j connection counts every minute and says whether they
   stayed flat.

Every level and sample prints the machine's load average: on a shared machine
the tail latencies say more about the other work than about Strata.

    .venv/bin/python bench/load.py [--seconds 20] [--levels 1,4,16] [--soak 15] [--heavy-workers 1]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import redis
from _stack import (
    SECRET,
    BenchStack,
    Worker,
    api_process,
    generated_repo,
    push,
    push_body,
    push_headers,
    settings_env,
    start_worker,
)

from strata.devstack.api import launch_api
from strata.devstack.procs import free_port
from strata.jobs import CODE_REINDEX
from strata.jobstore import JobStore

REINDEX_KIND = CODE_REINDEX.removeprefix("strata.")  # as the API records it
C1 = datetime(2025, 10, 1, tzinfo=UTC)
LOCUSTFILE = Path(__file__).resolve().parent / "_locustfile.py"
TYPES = ("symbol", "callers", "callees", "impact", "search", "context", "push")
SAMPLE_S = 60  # the soak's resource samples
SYMBOL = "query($id: ID!) { symbol(id: $id) { qualifiedName } }"


def wait_job(jobs: JobStore, job_id: str, timeout: float = 300) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = jobs.get(job_id).state
        if state in ("succeeded", "failed"):
            return state
        time.sleep(0.3)
    return "stuck"


def locust(
    base: str,
    clients: int,
    seconds: float,
    env: dict[str, str],
    out: Path,
    *,
    tags: tuple[str, ...] = (),
) -> Path:
    """One headless locust run (only the request types ``tags``, if any); its stats CSV."""
    prefix = out / (f"u{clients}" + "".join(f"-{t}" for t in tags))
    argv = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless"]
    if tags:
        argv += ["--tags", *tags]
    argv += ["-u", str(clients), "-r", str(clients), "-t", f"{int(seconds)}s"]
    argv += ["--host", base, "--csv", str(prefix), "--only-summary", "--loglevel", "WARNING"]
    with prefix.with_suffix(".log").open("wb") as log:  # locust's own report, kept apart
        subprocess.run(argv, env=env, check=False, timeout=seconds + 60, stdout=log, stderr=log)
    return prefix.with_name(prefix.name + "_stats.csv")


def warm_up(base: str, token: str, name: str, symbol: str) -> float:
    """One of each read before measuring (Neo4j caches, the search embedder load)."""
    started = time.monotonic()
    queries = [
        (SYMBOL, {"id": symbol}),
        ("query($id: ID!) { callers(symbol: $id, depth: 2) { qualifiedName } }", {"id": symbol}),
        ("query($id: ID!) { callees(symbol: $id, depth: 2) { qualifiedName } }", {"id": symbol}),
        ("query($id: ID!) { impact(symbol: $id) { tests { qualifiedName } } }", {"id": symbol}),
        (
            "query($t: String!, $r: String!) { context(task: $t, repository: $r) { tokens } }",
            {"t": "who calls helper?", "r": name},
        ),
        (
            "query($q: String!, $r: String!) { search(query: $q, repository: $r) "
            "{ hits(first: 10) { id } } }",
            {"q": "helper", "r": name},
        ),
    ]
    with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {token}"}) as client:
        for query, variables in queries:
            client.post(f"{base}/graphql", json={"query": query, "variables": variables})
    return time.monotonic() - started


def server_errors(stats: Path) -> dict[str, int]:
    """5xx answers per request type, from locust's failures CSV beside ``stats``."""
    failures = stats.with_name(stats.name.replace("_stats.csv", "_failures.csv"))
    counts: dict[str, int] = {}
    if failures.exists():
        with failures.open() as rows:
            for row in csv.DictReader(rows):
                if row["Error"].startswith("HTTP 5"):  # the locustfile's "HTTP <status>"
                    n = int(row["Occurrences"])
                    counts[row["Name"]] = counts.get(row["Name"], 0) + n
                    counts["Aggregated"] = counts.get("Aggregated", 0) + n
    return counts


def load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} on {os.cpu_count()} cores"


def levels(
    base: str,
    counts: list[int],
    seconds: float,
    env: dict[str, str],
    out: Path,
    *,
    tags: tuple[str, ...] = (),
) -> None:
    """The table of one locust run per client count (``tags``: those request types only)."""
    if tags:
        print(f"\n{', '.join(tags)} alone:", end="")
    print(
        f"\n{'clients':>7} {'type':>8} {'requests':>9} {'errors':>7} {'5xx':>5} {'req/s':>7} "
        f"{'p50 ms':>7} {'p99 ms':>7}"
    )
    for clients in counts:
        path = locust(base, clients, seconds, env, out, tags=tags)
        with path.open() as stats:
            rows = {row["Name"]: row for row in csv.DictReader(stats)}
        fives = server_errors(path)
        for name in (*TYPES, "Aggregated"):
            row = rows.get(name)
            if row is None:
                continue
            print(
                f"{clients:>7} {name:>8} {row['Request Count']:>9} {row['Failure Count']:>7} "
                f"{fives.get(name, 0):>5} {float(row['Requests/s']):>7.1f} {row['50%']:>7} "
                f"{row['99%']:>7}"
            )
        print(f"{'':>7} ({load_average()} after {clients} client(s))", flush=True)


def rate_limit(stack: BenchStack, name: str, limit: int) -> None:
    """A second API with a low per-key limit: one key's excess gets 429, another key not."""
    first, second = stack.key(name), stack.key(name)  # fresh keys: counts of their own
    env = {**settings_env(stack.settings), "STRATA_RATE_LIMIT_PER_MINUTE": str(limit)}
    port = free_port()
    proc = launch_api("127.0.0.1", port, env=env)
    try:
        url = f"http://127.0.0.1:{port}/graphql"
        sym = {"query": SYMBOL, "variables": {"id": f"{name}|main|pkg0/mod0.py|helper_0"}}
        codes: dict[int, int] = {}
        with httpx.Client(timeout=10) as client:
            for _ in range(limit + 15):
                got = client.post(url, json=sym, headers={"Authorization": f"Bearer {first}"})
                codes[got.status_code] = codes.get(got.status_code, 0) + 1
            other = client.post(url, json=sym, headers={"Authorization": f"Bearer {second}"})
        print(
            f"\nrate limit {limit}/min: key A sent {limit + 15}: "
            + ", ".join(f"{n}x HTTP {c}" for c, n in sorted(codes.items()))
            + f"; key B then got HTTP {other.status_code}"
            + ("  [engages]" if codes.get(429) and other.status_code == 200 else "  [NOT SEEN]")
        )
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def _burst(base: str, name: str, sha: str, count: int) -> dict[int, int]:
    body = push_body(name, "0" * 40, sha)
    headers = push_headers(body, delivery=f"burst-{name}")
    limits = httpx.Limits(max_connections=100)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        answers = await asyncio.gather(
            *(
                client.post(f"{base}/webhooks/github/{name}", content=body, headers=headers)
                for _ in range(count)
            )
        )
    codes: dict[int, int] = {}
    for answer in answers:
        codes[answer.status_code] = codes.get(answer.status_code, 0) + 1
    return codes


def burst(stack: BenchStack, base: str, jobs: JobStore, count: int = 500) -> None:
    """``count`` identical deliveries at once: exactly one job."""
    name = f"burst-{os.getpid()}"
    path = stack.var / "repos" / name
    sha = generated_repo(path, 5, C1)
    stack.register(name, path)
    codes = asyncio.run(_burst(base, name, sha, count))
    # Its reindex may queue follow-ups (knowledge, trace) of other kinds: count reindexes.
    made = [job for job in jobs.for_repo(name, limit=50) if job.kind == REINDEX_KIND]
    print(
        f"\nburst of {count} identical deliveries: "
        + ", ".join(f"{n}x HTTP {c}" for c, n in sorted(codes.items()))
        + f"; reindex jobs for the repository: {len(made)}"
        + ("  [ok]" if len(made) == 1 else "  [WRONG]")
    )


def _rss_kb(pid: int) -> int:
    """RSS of ``pid`` and its descendants (a worker's pool children and helpers)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            kids = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        todo += [int(k) for k in kids]
    return total


def _neo4j_connections(stack: BenchStack) -> tuple[int, str]:
    try:
        rows = stack.gateway.read(
            "CALL dbms.listConnections() YIELD connectionId RETURN count(*) AS n"
        )
        return int(rows[0]["n"]), "dbms.listConnections"
    except Exception:  # not in this edition: count established client sockets instead
        port = f"{stack.neo4j_port:04X}"
        count = 0
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[2].endswith(f":{port}") and fields[3] == "01":
                    count += 1
        return count, "established sockets"


def soak(
    stack: BenchStack,
    base: str,
    api_pid: int,
    worker: Worker,
    *,
    minutes: float,
    env: dict[str, str],
    out: Path,
) -> None:
    """4 clients for ``minutes``; resources sampled every minute; flat or not."""
    client = redis.Redis.from_url(stack.settings.redis_url)
    prefix = out / "soak"
    argv = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless", "-u", "4"]
    argv += ["-r", "4", "-t", f"{int(minutes * 60)}s", "--host", base, "--csv", str(prefix)]
    argv += ["--only-summary", "--loglevel", "WARNING"]
    with prefix.with_suffix(".log").open("wb") as log:
        load = subprocess.Popen(argv, env=env, stdout=log, stderr=log)
    samples: list[tuple[float, int, int, int, int]] = []
    how = ""
    print(f"\nsoak {minutes:g} min at 4 clients")
    print(
        f"{'t s':>6} {'api MB':>7} {'worker MB':>9} {'redis clients':>13} {'neo4j conns':>11}"
        f"  machine"
    )
    started = time.monotonic()
    while True:
        redis_clients = int(client.info("clients")["connected_clients"])
        neo4j, how = _neo4j_connections(stack)
        sample = (
            time.monotonic() - started,
            _rss_kb(api_pid),
            _rss_kb(worker.proc.pid),
            redis_clients,
            neo4j,
        )
        samples.append(sample)
        print(
            f"{sample[0]:>6.0f} {sample[1] / 1024:>7.0f} {sample[2] / 1024:>9.0f} "
            f"{sample[3]:>13} {sample[4]:>11}  {load_average()}",
            flush=True,
        )
        if load.poll() is not None:
            break
        time.sleep(SAMPLE_S)
    load.wait()
    # Flat: after warm-up (the second sample on), growth under 15% and 2 connections.
    base_sample = samples[1] if len(samples) > 2 else samples[0]
    last = samples[-1]
    verdicts = [
        ("api RSS", last[1] <= base_sample[1] * 1.15),
        ("worker RSS", last[2] <= base_sample[2] * 1.15),
        ("redis clients", last[3] <= base_sample[3] + 2),
        (f"neo4j connections ({how})", last[4] <= base_sample[4] + 2),
    ]
    print("soak: " + ", ".join(f"{n} {'flat' if ok else 'GREW'}" for n, ok in verdicts))
    with prefix.with_name("soak_stats.csv").open() as stats:
        for row in csv.DictReader(stats):
            if row["Name"] in ("symbol", "Aggregated"):
                print(
                    f"soak {row['Name']}: requests {row['Request Count']}, errors "
                    f"{row['Failure Count']}, p50 {row['50%']} ms, p99 {row['99%']} ms"
                )
    print(f"soak 5xx: {server_errors(prefix.with_name('soak_stats.csv')).get('Aggregated', 0)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--levels", default="1,4,16")
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--limit", type=int, default=30, help="rate limit of step 2")
    parser.add_argument("--soak", type=float, default=0, metavar="MINUTES")
    parser.add_argument("--symbol-clients", type=int, default=4, help="symbol lookups alone")
    parser.add_argument("--neo4j-port", type=int, default=0)
    parser.add_argument("--redis-port", type=int, default=0)
    parser.add_argument(
        "--heavy-workers",
        type=int,
        default=1,
        help="STRATA_API_HEAVY_WORKERS: processes for searches (0: in the API process)",
    )
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.levels.split(",") if c]
    # The load levels measure latency, not the limiter (step 2 shows that apart).
    overrides = {"rate_limit_per_minute": 1_000_000, "api_heavy_workers": args.heavy_workers}
    with BenchStack("load", args.neo4j_port, args.redis_port, overrides) as stack:
        name = f"load-{os.getpid()}"
        path = stack.var / "repos" / name
        sha = generated_repo(path, args.files, C1)
        token = stack.register(name, path)
        jobs = JobStore(redis.Redis.from_url(stack.settings.redis_url))
        worker = start_worker(stack)
        try:
            with api_process(stack) as (base, api):
                t0 = time.monotonic()
                state = wait_job(jobs, push(base, name, sha))
                print(
                    f"indexed {args.files} modules through a push: {state} "
                    f"in {time.monotonic() - t0:.1f} s; searches in "
                    + (
                        f"{args.heavy_workers} heavy-read process(es)"
                        if args.heavy_workers
                        else "the API process"
                    )
                )
                symbols = [
                    f"{name}|main|pkg{i % 20}/mod{i}.py|helper_{i}"
                    for i in range(0, args.files, max(1, args.files // 50))
                ]
                env = {
                    **os.environ,
                    "LOAD_TOKEN": token,
                    "LOAD_REPO": name,
                    "LOAD_SHA": sha,
                    "LOAD_SYMBOLS": ",".join(symbols),
                    "LOAD_SECRET": SECRET,
                }
                warm = warm_up(base, token, name, symbols[0])
                print(f"warm-up (one of each read): {warm:.1f} s")
                out = stack.var / "locust"
                out.mkdir(parents=True, exist_ok=True)
                levels(base, counts, args.seconds, env, out)
                # Searches run in the API's heavy-read processes (--heavy-workers; 0: in
                # the API process itself); this level shows a symbol lookup's own cost.
                levels(base, [args.symbol_clients], args.seconds, env, out, tags=("symbol",))
                rate_limit(stack, name, args.limit)
                burst(stack, base, jobs)
                if args.soak:
                    soak(stack, base, api.pid, worker, minutes=args.soak, env=env, out=out)
        finally:
            worker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

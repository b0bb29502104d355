"""Faults against the real services: killed workers, restarted Redis and Neo4j, races.

Each scenario runs ``--repeat`` times (default 50) on a fresh generated repository
of ``--files`` modules (default 300: small, so a repetition takes seconds and 50 of
them fit in minutes, yet writing long enough for a fault to hit), pushed through a
signed webhook to a real API and a real prefork ``celery worker`` (bench/_stack.py
starts Neo4j and Redis on ports of their own, data under bench/.cache/faults, and
stops them):

a. child:  SIGKILL the worker's pool child while its job is in the "writing" phase;
b. worker: SIGKILL the whole worker mid-write, start a new one (its reaper sends the
   job again: strata.jobs_recovery);
c. redis:  restart Redis while one job runs and two wait in the queue;
d. neo4j:  restart Neo4j mid-batch (killed, by default: a crash; or shut down);
e. race-api: two pushes of the same repository and ref at once (two worker jobs);
   race-cli: a push (API -> worker) and ``strata index`` (CLI) of the same
   repository and ref at once.

After each repetition every job must have ended (SUCCEEDED, or FAILED after its
attempts and listed in the repository's dead letters, ``jobs(deadLetter: true)``;
queued or RUNNING past ``--timeout`` counts as stuck), and
:func:`strata.graph.integrity.check_repository` (what ``strata check-integrity``
runs) must find, over every fact slot of the repository, at most one open version
and no overlap in valid time. A repository whose job failed is pushed again; its
recovery time is from the fault to the first succeeded index (the graph current
again). A repetition whose job ended before its fault could hit it (*missed*) is run
again: ``--repeat`` counts faults that hit. ``--budget`` bounds the whole run: once
spent, the remaining repetitions are not started and the table counts the runs made.

    nice .venv/bin/python bench/faults.py [--repeat 5] [--only child,neo4j] [--budget 1800]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import redis
from _stack import ROOT, BenchStack, Worker, api_process, generated_repo, push, start_worker

from strata.devstack.procs import port_open
from strata.graph.integrity import check_repository
from strata.jobstore import JobRecord, JobStore
from strata.ontology import load_ontology

C1 = datetime(2025, 9, 1, tzinfo=UTC)
ENDED = ("succeeded", "failed")
# A job FAILED `worker_lost` by the worker's main process (its pool child was killed)
# is redelivered at once; it counts as ended only if no new run starts within this.
REDELIVERY_GRACE_S = 20.0
# Two pool children: two jobs of one repository can run at once (the race scenarios),
# and a killed child leaves a sibling running.
WORKER_CONCURRENCY = 2
MAX_TRIES = 3


@dataclass
class Outcome:
    """One repetition of one scenario."""

    succeeded: int = 0
    failed: int = 0  # failed after its attempts (the error code is kept)
    dead: int = 0  # failed jobs listed in the repository's dead letters
    reruns: int = 0  # jobs that succeeded on a later attempt (a redelivery or a retry)
    stuck: int = 0
    duplicates: int = 0
    overlaps: int = 0
    missed: bool = False  # the job ended before the fault could hit it mid-write
    recovery_s: float | None = None
    errors: list[str] = field(default_factory=list)


@dataclass
class Bench:
    stack: BenchStack
    base: str
    worker: Worker
    files: int
    timeout: float
    neo4j_kill: bool = True
    jobs: JobStore = field(init=False)

    def __post_init__(self) -> None:
        self.jobs = JobStore(redis.Redis.from_url(self.stack.settings.redis_url))

    def record(self, job_id: str) -> JobRecord | None:
        try:
            return self.jobs.get(job_id)
        except redis.RedisError:  # Redis is down or restarting: ask again later
            return None

    def fresh_repo(self, scenario: str) -> tuple[str, str]:
        name = f"{scenario}-{uuid.uuid4().hex[:8]}"
        path = self.stack.var / "repos" / name
        sha = generated_repo(path, self.files, C1)
        self.stack.register(name, path)
        return name, sha

    def until_writing(self, job_id: str) -> JobRecord | None:
        """Wait until the job writes facts; None if it ended first."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            record = self.record(job_id)
            if record is not None:
                if record.state in ENDED:
                    return None
                if record.state == "running" and record.progress.get("phase") == "writing":
                    return record
            time.sleep(0.02)
        return None

    def until_ended(
        self, job_id: str, timeout: float | None = None, grace: float = REDELIVERY_GRACE_S
    ) -> JobRecord | None:
        """The ended record, or None if it is still queued/running at the deadline.

        A ``worker_lost`` failure is final only once no redelivered run started
        within ``grace`` seconds.
        """
        deadline = time.monotonic() + (timeout or self.timeout)
        lost_since: float | None = None
        while time.monotonic() < deadline:
            record = self.record(job_id)
            if record is not None and record.state in ENDED:
                lost = record.state == "failed" and (record.error or {}).get("code") == (
                    "worker_lost"
                )
                if not lost:
                    return record
                lost_since = lost_since or time.monotonic()
                if time.monotonic() - lost_since >= grace:
                    return record
            elif record is not None:
                lost_since = None
            time.sleep(0.2)
        return None

    def settle(
        self,
        out: Outcome,
        name: str,
        sha: str,
        job_ids: list[str],
        fault_at: float,
        *,
        grace: float = REDELIVERY_GRACE_S,
    ) -> None:
        """Count how the jobs ended, recover a failed repository, check its facts."""
        recovered = False
        for job_id in job_ids:
            record = self.until_ended(job_id, grace=grace)
            if record is None:
                out.stuck += 1
                out.errors.append(f"{job_id} stuck")
            elif record.state == "succeeded":
                out.succeeded += 1
                recovered = True
                if record.attempts > 1:  # a redelivery or a retry finished it
                    out.reruns += 1
                    out.errors.append(f"succeeded on attempt {record.attempts}")
            else:
                out.failed += 1
                code = (record.error or {}).get("code")
                out.errors.append(f"{code} after {record.attempts} attempt(s)")
                dead = {job.id for job in self.jobs.dead_letters(name, limit=100)}
                if job_id in dead:
                    out.dead += 1
                else:
                    out.errors.append(f"failed job {job_id} missing from the dead letters")
        if not recovered:  # the graph must become current again from a new push
            again = self.until_ended(push(self.base, name, sha))
            recovered = again is not None and again.state == "succeeded"
            if not recovered:
                out.errors.append(f"re-push did not recover: {again.error if again else 'stuck'}")
        if recovered:
            out.recovery_s = time.monotonic() - fault_at
        self.check(out, name)

    def check(self, out: Outcome, name: str) -> None:
        ontology = load_ontology(self.stack.settings.ontology_dir)
        report = check_repository(self.stack.gateway, ontology, name)
        if not report.slots:
            out.errors.append("no facts at all")
        out.duplicates += report.duplicates
        out.overlaps += report.overlapping
        out.errors += [v.describe() for v in report.violations[:3]]


def kill_child(bench: Bench) -> Outcome:
    out = Outcome()
    name, sha = bench.fresh_repo("child")
    job_id = push(bench.base, name, sha)
    running = bench.until_writing(job_id)
    out.missed = running is None
    fault_at = time.monotonic()
    if running is not None and running.worker:
        child = int(running.worker.rsplit(":", 1)[1])  # host:pid of the pool child
        if child in bench.worker.children():
            os.kill(child, signal.SIGKILL)
        else:
            out.errors.append(f"job ran in {running.worker}, not a child of the worker")
    bench.settle(out, name, sha, [job_id], fault_at)
    return out


def kill_worker(bench: Bench) -> Outcome:
    out = Outcome()
    name, sha = bench.fresh_repo("worker")
    job_id = push(bench.base, name, sha)
    out.missed = bench.until_writing(job_id) is None
    fault_at = time.monotonic()
    if not out.missed:
        bench.worker.kill()
        bench.worker.stop()  # and its parse helpers
        bench.worker = start_worker(bench.stack, concurrency=WORKER_CONCURRENCY)
    # Nobody is left to redeliver (the message waits out the visibility timeout): the
    # new worker's reaper sees the run's processes gone and sends the job again.
    bench.settle(out, name, sha, [job_id], fault_at)
    return out


def restart_redis(bench: Bench) -> Outcome:
    out = Outcome()
    repos = [bench.fresh_repo("redis") for _ in range(3)]
    job_ids = [push(bench.base, name, sha) for name, sha in repos]  # one runs, two wait
    out.missed = bench.until_writing(job_ids[0]) is None
    fault_at = time.monotonic()
    if not out.missed:
        bench.stack.redis.stop()
        time.sleep(1.0)
        bench.stack.redis.start()
    for (name, sha), job_id in zip(repos, job_ids, strict=True):
        bench.settle(out, name, sha, [job_id], fault_at)
    return out


def restart_neo4j(bench: Bench) -> Outcome:
    out = Outcome()
    name, sha = bench.fresh_repo("neo4j")
    job_id = push(bench.base, name, sha)
    out.missed = bench.until_writing(job_id) is None
    fault_at = time.monotonic()
    if not out.missed:
        # Killed, not shut down (--neo4j-stop kill, the default): a crash mid-batch is the
        # harder case (recovery from the transaction log) and skips the graceful
        # shutdown's wait for the open write transaction.
        bench.stack.neo4j.proc.stop(timeout=0.0 if bench.neo4j_kill else 60.0)
        deadline = time.monotonic() + 60  # a killed JVM frees its port once it has exited
        while port_open("127.0.0.1", bench.stack.neo4j_port) and time.monotonic() < deadline:
            time.sleep(0.2)
        bench.stack.neo4j.start(timeout=300)
        bench.stack.reconnect()
    bench.settle(out, name, sha, [job_id], fault_at)
    return out


def race_api(bench: Bench) -> Outcome:
    """Two pushes of the same commit at once: the worker's repository lock orders them."""
    out = Outcome()
    name, sha = bench.fresh_repo("race-api")
    fault_at = time.monotonic()
    job_ids = [push(bench.base, name, sha), push(bench.base, name, sha)]
    bench.settle(out, name, sha, job_ids, fault_at)
    return out


def race_cli(bench: Bench) -> Outcome:
    """A push and ``strata index`` of the same commit at once."""
    out = Outcome()
    name, sha = bench.fresh_repo("race-cli")
    path = bench.stack.var / "repos" / name
    fault_at = time.monotonic()
    job_id = push(bench.base, name, sha)
    cli = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "strata"), "index", str(path), "--repo", name],
        env=bench.stack.env(COLUMNS="200"),
        capture_output=True,
        text=True,
        timeout=bench.timeout,
        check=False,
    )
    if cli.returncode != 0:
        out.failed += 1
        out.errors.append(f"strata index exited {cli.returncode}: {cli.stderr.strip()[-300:]}")
    else:
        out.succeeded += 1
    bench.settle(out, name, sha, [job_id], fault_at)
    return out


SCENARIOS: dict[str, Callable[[Bench], Outcome]] = {
    "child": kill_child,
    "worker": kill_worker,
    "redis": restart_redis,
    "neo4j": restart_neo4j,
    "race-api": race_api,
    "race-cli": race_cli,
}


def summary(results: dict[str, list[Outcome]]) -> None:
    head = [
        "scenario",
        "hit",
        "missed",
        "succeeded",
        "reruns",
        "failed",
        "dead",
        "stuck",
        "dup",
        "overlap",
        "recov_s",
    ]
    print("\n" + "  ".join(f"{h:>9}" for h in head))
    for scenario, outs in results.items():
        times = [o.recovery_s for o in outs if o.recovery_s is not None]
        median = f"{statistics.median(times):.1f}" if times else "-"
        row = (
            scenario,
            sum(not o.missed for o in outs),
            sum(o.missed for o in outs),
            sum(o.succeeded for o in outs),
            sum(o.reruns for o in outs),
            sum(o.failed for o in outs),
            sum(o.dead for o in outs),
            sum(o.stuck for o in outs),
            sum(o.duplicates for o in outs),
            sum(o.overlaps for o in outs),
            median,
        )
        print("  ".join(f"{v!s:>9}" for v in row))
    for scenario, outs in results.items():
        seen = sorted({e for o in outs for e in o.errors})
        if seen:
            print(f"{scenario}: " + "; ".join(seen[:6]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per job")
    parser.add_argument(
        "--budget", type=float, default=0, help="seconds for the whole run (0: unbounded)"
    )
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    parser.add_argument(
        "--name", default="faults", help="data folder under bench/.cache (two runs at once)"
    )
    parser.add_argument(
        "--neo4j-stop",
        choices=("kill", "graceful"),
        default="kill",
        help="how the neo4j scenario stops Neo4j: SIGKILL (a crash) or SIGTERM and wait",
    )
    parser.add_argument("--neo4j-port", type=int, default=0)
    parser.add_argument("--redis-port", type=int, default=0)
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(chosen) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    results: dict[str, list[Outcome]] = {s: [] for s in chosen}
    # A TERM (or INT) ends the run after the repetition under way: the table is printed
    # and the context managers stop what the run started.
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _: stop.append(signum))
    started = time.monotonic()
    with (
        BenchStack(args.name, args.neo4j_port, args.redis_port) as stack,
        api_process(stack) as (base, _),
    ):
        worker = start_worker(stack, concurrency=WORKER_CONCURRENCY)
        bench = Bench(
            stack, base, worker, args.files, args.timeout, neo4j_kill=args.neo4j_stop == "kill"
        )
        try:
            for scenario in chosen:
                hits = tries = 0
                # A repetition counts once its fault hit the job mid-write; a missed
                # one (the job ended first) is run again, up to MAX_TRIES per hit.
                while hits < args.repeat and tries < MAX_TRIES * args.repeat:
                    if stop or (args.budget and time.monotonic() - started > args.budget):
                        why = "stopped" if stop else "budget spent"
                        print(f"{scenario}: {why}, {hits} of {args.repeat} hit", flush=True)
                        break
                    tries += 1
                    t0 = time.monotonic()
                    out = SCENARIOS[scenario](bench)
                    results[scenario].append(out)
                    hits += not out.missed
                    broken = out.stuck or out.duplicates or out.overlaps or out.failed != out.dead
                    verdict = "BAD" if broken else ("missed" if out.missed else "ok")
                    print(
                        f"{scenario} {hits}/{args.repeat} (try {tries}): {verdict} "
                        f"({time.monotonic() - t0:.1f} s) {'; '.join(out.errors[:3])}",
                        flush=True,
                    )
        finally:
            bench.worker.stop()
    summary(results)
    print(f"\ntotal {time.monotonic() - started:.0f} s")
    bad = any(
        o.stuck or o.duplicates or o.overlaps or o.failed != o.dead
        for outs in results.values()
        for o in outs
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

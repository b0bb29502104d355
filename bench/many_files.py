"""A repository of many indexed files through the push path: how long, and whole.

Writes ``--files`` tiny Python modules (default 50,000, in folders of 500) as one
commit with ``git fast-import``, pushes it through a signed webhook to a real API
and a real prefork ``celery worker`` (bench/_stack.py starts Neo4j and Redis on
ports of their own, data under bench/.cache/many, and stops them), then pushes a
one-file change on top. Prints each job's wall time (push received -> job end),
its phases and counters, and fails loudly if a job did not SUCCEED or the graph
does not hold every file.

    nice .venv/bin/python bench/many_files.py [--files 50000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis
from _stack import BenchStack, api_process, push, start_worker

from strata.jobstore import JobStore
from strata.testing import fast_commit

WHEN = int(datetime(2025, 11, 1, tzinfo=UTC).timestamp())
MODULE = b"def f():\n    return 1\n\n\ndef g():\n    return f()\n"
CHANGED = b"def f():\n    return 2\n\n\ndef h():\n    return f()\n"


def _path(i: int) -> str:
    return f"pkg{i // 500:03d}/m{i:06d}.py"


def _job(jobs: JobStore, job_id: str, timeout: float) -> tuple[float, Any]:
    """Wait for the job to end; (seconds from its creation to its end, record)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = jobs.get(job_id)
        if record.state in ("succeeded", "failed"):
            assert record.finished_at is not None
            return (record.finished_at - record.created_at).total_seconds(), record
        time.sleep(0.5)
    raise SystemExit(f"job {job_id} still {jobs.get(job_id).state} after {timeout:.0f} s")


def _report(what: str, seconds: float, record: Any) -> None:
    result = record.result or {}
    if record.state != "succeeded":
        raise SystemExit(f"{what}: job {record.state}: {record.error}")
    phases = " ".join(f"{k} {v:.1f}" for k, v in (result.get("seconds") or {}).items())
    print(
        f"{what:18} {seconds:8.1f} s  mode {result.get('mode')}  files {result.get('files_total')}"
        f"  parsed {result.get('files_parsed')}  facts {result.get('facts')}  phases: {phases}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"{args.files} modules; load average {load:.2f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory(prefix="strata-many-") as tmp, BenchStack("many") as stack:
        path = Path(tmp) / "many"
        started = time.perf_counter()
        c1 = fast_commit(path, ((_path(i), MODULE) for i in range(args.files)), WHEN)
        print(f"{'fast-import':18} {time.perf_counter() - started:8.1f} s", flush=True)
        stack.register("many", path)
        jobs = JobStore(redis.Redis.from_url(stack.settings.redis_url))
        worker = start_worker(stack)
        try:
            with api_process(stack) as (base, _):
                seconds, record = _job(jobs, push(base, "many", c1), args.timeout)
                _report("full push", seconds, record)
                c2 = fast_commit(path, [(_path(7), CHANGED)], WHEN + 3600, parent=c1)
                seconds, record = _job(jobs, push(base, "many", c2, before=c1), args.timeout)
                _report("one-file push", seconds, record)
        finally:
            worker.stop()
        rows = stack.gateway.read("MATCH (f:File {repo: 'many'}) RETURN count(f) AS n")
        if rows[0]["n"] != args.files:
            raise SystemExit(f"the graph holds {rows[0]['n']} files, not {args.files}")
        print(f"graph holds all {args.files} files", flush=True)


if __name__ == "__main__":
    sys.exit(main())

"""The race: Strata against codegraph on the same large tree, same machine, one run.

The tree is the whole source distribution of Django 5.2.8 from PyPI (tests
included; about 2,800 Python files), checked against its sha256 and committed
into a throwaway git repository. The run measures, each as wall time and peak
RSS:

- ``strata index`` (CLI), full, then a one-file change indexed incrementally,
  both through the index daemon as `strata index` runs by default (a new daemon
  for the full index; its peak RSS is the one reported: it did the indexing),
  then one-file changes with ``--no-daemon`` (a new process each time);
- the same through the real path: a signed push webhook -> the API -> the code
  worker, timed from the POST to the job's end. By default on a stack of its
  own (``strata up`` with a fresh data folder and free ports, stopped at the
  end), so a run neither reads nor grows the developer's graph and two runs
  start from the same empty graph; ``--dev-stack`` uses the dev stack instead;
  the one-file pushes are timed once the stack is quiet (the full push's
  follow-ups, its embeddings above all, have ended; that wait is printed too),
  and each waits for the previous one's follow-ups;
- ``@colbymchenry/codegraph`` (pinned, installed from npm into bench/.cache by
  the bench) ``init`` and ``sync`` of the same change on a copy of the tree;
- ``strata --help`` and a ``strata graphql`` round trip (medians of 5);
- the CLI full index once more, as a new repository, on the Neo4j the runs before
  it warmed (the first one paid the JVM's compilation of Neo4j's write path; a
  long-running Neo4j has paid it already); ``--skip-warm`` leaves it out.

For each CLI full index on a local Neo4j it also prints that Neo4j's CPU seconds
during the run and how many of them the JVM's JIT compiler threads took.

    .venv/bin/python bench/race.py [--rounds 3] [--skip-codegraph] [--skip-worker]
        [--skip-warm] [--profile-worker PY_SPY] [--dev-stack]

``--profile-worker`` samples the code worker (its pool child included) with the
given ``py-spy`` binary during each one-file push and prints where the job's
time went (inclusive share per function, our code and the libraries it calls).

Prints one table with the ratios next to the targets (2 cores): full index <=
1.0x codegraph (milestone), <= 0.5x (goal), indexing process peak RSS <= 1 GB;
one-file reindex through the worker <= 300 ms, <= 3% of our full index and <=
0.1x codegraph's sync; ``strata --help`` <= 0.3 s; ``strata graphql`` <= 0.5 s.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import statistics
import subprocess
import tarfile
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import sdists  # bench/sdists.py: pinned sdists and throwaway git repositories
from _proc import stat_cpu_s  # bench/_proc.py
from sdists import git

from strata.devstack.neo4j import Neo4jServer
from strata.settings import load_settings
from strata.testing import push_headers, push_payload

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".cache"
# The throwaway repositories live outside the checkout: 8,000 Django files under
# bench/ would be walked by every tool and test that reads the project's sources.
# One folder per checkout: two checkouts racing at once must not share a tree.
WORK = Path(tempfile.gettempdir()) / (
    f"strata-race-{os.getuid()}-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]}"
)
STRATA = str(ROOT / ".venv" / "bin" / "strata")
SDIST = "django-5.2.8.tar.gz"
SDIST_SHA256 = "23254866a5bb9a2cfa6004e8b809ec6246eba4b58a7589bc2772f1bcc8456c7f"
CODEGRAPH = "@colbymchenry/codegraph@1.6.1"
T0 = datetime(2025, 11, 5, tzinfo=UTC)
ZERO = "0" * 40
SECRET = "race-webhook-secret-" + "0" * 16
CHANGED = "django/utils/text.py"
JOB = "query($id: ID!) { job(id: $id) { state progress error result createdAt finishedAt } }"


# -- measuring ------------------------------------------------------------------------


@dataclass(slots=True)
class Run:
    wall_s: float
    peak_rss_mb: float  # the process itself (wait4)
    tree_rss_mb: float  # the process and its children together, sampled every 50 ms
    output: str
    neo4j: Neo4jCpu | None = None  # the local Neo4j's CPU during the run, when measured


def _tree_rss_kb(root: int) -> int:
    """RSS of ``root`` and all its descendants, from /proc (0 once it is gone)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                rss[int(entry)] = int(line.split()[1])
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


def measured(
    cmd: Sequence[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
) -> Run:
    """Run ``cmd`` to its end: wall time, its own peak RSS and the sampled tree peak."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    peak = [0]
    chunks: list[str] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_kb(proc.pid))
            done.wait(0.05)

    def read() -> None:
        assert proc.stdout is not None
        chunks.append(proc.stdout.read())

    threads = [threading.Thread(target=sample, daemon=True), threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    assert proc.stdin is not None
    if stdin:
        proc.stdin.write(stdin)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)  # the child's own rusage, not its children's
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    for thread in threads:
        thread.join()
    output = "".join(chunks)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{output[-3000:]}")
    return Run(wall, usage.ru_maxrss / 1024, peak[0] / 1024, output)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass(frozen=True, slots=True)
class Neo4jCpu:
    """CPU seconds of the local Neo4j process: all its threads, and the JVM's JIT
    compiler threads among them (long-lived, so /proc keeps their whole count)."""

    total_s: float
    jit_s: float

    @classmethod
    def now(cls) -> Neo4jCpu | None:
        """None unless the settings point at the stack's own Neo4j and it runs."""
        settings = load_settings()
        server = Neo4jServer.from_settings(settings)
        pid = server.proc.pid() if settings.neo4j_uri == server.uri else None
        if pid is None:
            return None
        try:
            total = stat_cpu_s(Path(f"/proc/{pid}/stat"))
        except OSError:
            return None  # gone meanwhile
        jit = 0.0
        for task in Path(f"/proc/{pid}/task").iterdir():
            with suppress(OSError):
                if "CompilerThre" in (task / "comm").read_text():
                    jit += stat_cpu_s(task / "stat")
        return cls(total, jit)

    def since(self, before: Neo4jCpu | None) -> Neo4jCpu | None:
        if before is None:
            return None
        return Neo4jCpu(self.total_s - before.total_s, self.jit_s - before.jit_s)

    def line(self) -> str:
        return (
            f"Neo4j CPU {self.total_s:.1f}s, of which the JVM's JIT compiler threads "
            f"{self.jit_s:.1f}s ({self.jit_s / self.total_s:.0%})"
            if self.total_s
            else "Neo4j CPU 0s"
        )


# -- the tree -------------------------------------------------------------------------


def fetch_sdist() -> Path:
    return sdists.fetch("django", "5.2.8", SDIST_SHA256, CACHE)


def make_repo(sdist: Path, name: str) -> Path:
    repo = WORK / name
    if repo.exists():
        shutil.rmtree(repo)
    extract = WORK / f"{name}.extract"
    shutil.rmtree(extract, ignore_errors=True)
    with tarfile.open(sdist) as tar:
        tar.extractall(extract, filter="data")
    shutil.move(str(extract / "django-5.2.8"), str(repo))
    shutil.rmtree(extract)
    sdists.commit_all(repo, "django 5.2.8", T0)
    return repo


def tree_size(repo: Path) -> tuple[int, int]:
    files = [p for p in git(repo, "ls-files").splitlines() if p.endswith(".py")]
    lines = sum((repo / p).read_bytes().count(b"\n") for p in files)
    return len(files), lines


def change_one_file(repo: Path, round_no: int) -> str:
    """Append a function that calls two existing ones to one module and commit it."""
    with (repo / CHANGED).open("a") as handle:
        handle.write(f"\n\ndef race_slug_{round_no}(value):\n    return slugify(capfirst(value))\n")
    git(repo, "commit", "-qam", f"race change {round_no}", when=T0 + timedelta(hours=round_no + 1))
    return git(repo, "rev-parse", "HEAD")


# -- Strata through the CLI -----------------------------------------------------------


def strata_cli(repo: Path, rounds: int) -> dict[str, Any]:
    """The full index, then one-file changes: through the index daemon (what `strata
    index` does by default), then the same number of changes with ``--no-daemon``."""
    name = f"race-cli-{uuid.uuid4().hex[:8]}"
    full = through_daemon([STRATA, "index", str(repo), "--repo", name])
    incremental = []
    for n in range(rounds):
        change_one_file(repo, n)
        incremental.append(measured([STRATA, "index", str(repo), "--repo", name]))
    alone = []
    for n in range(rounds, 2 * rounds):
        change_one_file(repo, n)
        alone.append(measured([STRATA, "index", str(repo), "--repo", name, "--no-daemon"]))
    return {"full": full, "incremental": incremental, "no_daemon": alone}


def through_daemon(cmd: Sequence[str]) -> Run:
    """``cmd`` (a `strata index`) run by a daemon started for it: the wall time of the
    command, and the peak RSS of the daemon, which indexed (the command only waited)."""
    from strata.indexd import client

    settings = load_settings()
    client.stop_all(settings)  # a new daemon, as a first `strata index` gets
    before = Neo4jCpu.now()
    run = measured(cmd)
    after = Neo4jCpu.now()
    status = client.status(settings)
    if status is None:
        raise SystemExit("the index daemon stopped after the run")
    neo4j = after.since(before) if after is not None else None
    return Run(run.wall_s, status["peak_rss_mb"], status["peak_rss_mb"], run.output, neo4j)


# -- Strata through webhook -> API -> worker ------------------------------------------


class Stack:
    """The dev stack from `strata up`; stopped at the end only if this bench started it."""

    def __init__(self) -> None:
        self.started = False
        settings = load_settings()  # the STRATA_* ports of the stack `strata up` starts
        self.base = f"http://{settings.api_host}:{settings.api_port}"
        self.token = ""

    def __enter__(self) -> Stack:
        status = subprocess.run([STRATA, "status"], check=False, capture_output=True, text=True)
        if "api" not in status.stdout or "stopped" in status.stdout or status.returncode:
            # The bench polls jobs: lift the per-key rate limit of the stack it starts.
            env = dict(os.environ, STRATA_RATE_LIMIT_PER_MINUTE="1000000")
            subprocess.run([STRATA, "up"], check=True, env=env)
            self.started = True
        self.token = subprocess.run(
            [
                STRATA,
                "key",
                "create",
                "--scopes",
                "admin,write,read",
                "--repos",
                "*",
                "--name",
                "race",
                "--token-only",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.started:
            subprocess.run([STRATA, "down"], check=False)

    def gql(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.base}/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=30,
        ).json()
        if answer.get("errors"):
            raise SystemExit(f"GraphQL error: {answer['errors']}")
        return dict(answer["data"])

    def quiet(self, repo: str, timeout: float = 1800) -> float:
        """Wait until no job of ``repo`` is queued or running (the follow-ups a push sent:
        knowledge sync, trace settle, the embedding jobs); the seconds it took."""
        started = time.monotonic()
        query = "query($r: String!) { jobs(repository: $r) { state } }"
        while time.monotonic() - started < timeout:
            jobs = self.gql(query, {"r": repo})["jobs"]
            if all(j["state"] in ("SUCCEEDED", "FAILED") for j in jobs):
                break
            time.sleep(0.5)
        return time.monotonic() - started

    def push(self, repo: str, before: str, after: str) -> tuple[float, dict[str, Any]]:
        """POST a signed push and wait for its job: (seconds from the API receiving the
        push to the job's end, as the job record says; the job)."""
        body = push_payload(repo, before, after)
        accepted = httpx.post(
            f"{self.base}/webhooks/github/{repo}",
            content=body,
            timeout=30,
            headers=push_headers(body, SECRET),
        )
        if accepted.status_code != 202:
            raise SystemExit(f"webhook refused: {accepted.status_code} {accepted.text}")
        job_id = accepted.json()["jobs"][0]
        while True:
            job = self.gql(JOB, {"id": job_id})["job"]
            if job["state"] in ("SUCCEEDED", "FAILED"):
                break
            time.sleep(0.05)
        if job["state"] != "SUCCEEDED":
            raise SystemExit(f"job failed: {job['error']}")
        created = datetime.fromisoformat(job["createdAt"])
        finished = datetime.fromisoformat(job["finishedAt"])
        return (finished - created).total_seconds(), job


def worker_peak_mb() -> float:
    """The highest peak RSS (VmHWM) among the code worker's processes."""
    best = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        if b"celery" in cmdline and b"code" in cmdline:
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    best = max(best, int(line.split()[1]))
    return best / 1024


def code_worker_pid() -> int | None:
    """The main process of the code worker (its pool children are sampled with it)."""
    for entry in sorted(os.listdir("/proc")):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        parent_argv = b""
        with suppress(OSError):
            parent_argv = Path(f"/proc/{parent}/cmdline").read_bytes()
        if b"celery" in b" ".join(argv) and b"code" in argv and b"celery" not in parent_argv:
            return int(entry)
    return None


@contextmanager
def sampled(py_spy: str | None, out: Path) -> Iterator[None]:
    """Sample the code worker with py-spy (folded stacks into ``out``) while inside."""
    pid = code_worker_pid() if py_spy else None
    if py_spy is None or pid is None:
        yield
        return
    cmd = [py_spy, "record", "--pid", str(pid), "--subprocesses", "--idle", "--rate", "250"]
    cmd += ["--format", "raw", "--output", str(out), "--nonblocking"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # py-spy attaches before the push is sent
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


# Leaf frames of a thread that waits (py-spy names them ``Class.function (file:line)``,
# e.g. ``Condition.wait (threading.py:331)``): a heartbeat or lease thread between beats.
IDLE_CALLS = {
    ("wait", "threading.py"),
    ("select", "selectors.py"),
    ("poll", ""),  # selectors, and kombu's event loop in the main celery process
    ("_recv", "connection.py"),  # billiard: the main process waiting on its pool
    ("_recv_into", ""),
    ("sleep", ""),
}


def _idle(frame: str) -> bool:
    name, _, where = frame.partition(" (")
    function = name.rsplit(".", 1)[-1]
    module = where.rsplit(":", 1)[0].rsplit("/", 1)[-1]
    return (function, module) in IDLE_CALLS or (function, "") in IDLE_CALLS


def profile_breakdown(folded: Path, top: int = 28) -> list[str]:
    """Inclusive share of the busy samples per function (idle waits left out)."""
    inclusive: Counter[str] = Counter()
    busy = 0
    for line in folded.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        if any(_idle(frame) for frame in frames[-2:]):
            continue
        busy += int(count)
        for frame in set(frames):
            if "strata" not in frame or frame.startswith("process "):
                continue  # our own functions only: Celery's loop wraps every sample
            name = frame.split(" (", 1)[0] + " " + frame.rsplit("/", 1)[-1].rstrip(")")
            inclusive[name] += int(count)
    lines = [f"{busy} busy samples (250/s), inclusive share of our functions"]
    for name, samples in inclusive.most_common(top):
        lines.append(f"  {samples / max(busy, 1):6.1%}  {name}")
    return lines


def strata_worker(
    repo: Path, rounds: int, stack: Stack, py_spy: str | None = None
) -> dict[str, Any]:
    name = f"race-wk-{uuid.uuid4().hex[:8]}"
    subprocess.run(
        [
            STRATA,
            "repo",
            "add",
            name,
            "--provider",
            "github",
            "--path",
            str(repo),
            "--secret-stdin",
        ],
        input=SECRET + "\n",
        check=True,
        capture_output=True,
        text=True,
    )
    head = git(repo, "rev-parse", "HEAD")
    full, full_job = stack.push(name, ZERO, head)
    # The one-file pushes are timed on a quiet stack: the full push's follow-ups (45k
    # documents to embed: minutes of both cores) would otherwise run beside them.
    followups = stack.quiet(name)
    incremental = []
    phases: list[dict[str, float]] = []
    tasks: list[dict[str, float]] = []  # the task's own steps around the index
    profiles: list[list[str]] = []
    for n in range(rounds):
        after = change_one_file(repo, n)
        folded = WORK / f"worker-one-file-{n}.folded"
        folded.unlink(missing_ok=True)
        with sampled(py_spy, folded):
            seconds, job = stack.push(name, head, after)
        stack.quiet(name)  # its follow-ups, before the next round
        if folded.exists():
            profiles.append(profile_breakdown(folded))
        incremental.append(seconds)
        result = job.get("result") or {}
        phases.append(dict(result.get("seconds") or {}))
        tasks.append(dict(result.get("task_seconds") or {}))
        head = after
    full_result = full_job.get("result") or {}
    return {
        "full": full,
        "full_phases": dict(full_result.get("seconds") or {}),
        "full_tasks": dict(full_result.get("task_seconds") or {}),
        "followups": followups,
        "incremental": incremental,
        "phases": phases,
        "tasks": tasks,
        "profiles": profiles,
        "peak_mb": worker_peak_mb(),
    }


def cli_latency(stack: Stack | None) -> dict[str, float]:
    helps = [measured([STRATA, "--help"]).wall_s for _ in range(5)]
    out = {"help": median(helps)}
    if stack is not None:
        env = dict(os.environ, STRATA_API_KEY=stack.token)
        rounds = [measured([STRATA, "graphql", "{ __typename }"], env=env).wall_s for _ in range(5)]
        out["graphql"] = median(rounds)
    return out


# -- codegraph ------------------------------------------------------------------------


def codegraph(repo: Path, rounds: int) -> dict[str, Any]:
    home = CACHE / "codegraph"
    binary = home / "node_modules" / ".bin" / "codegraph"
    if not binary.exists():
        home.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--save-exact", CODEGRAPH],
            cwd=home,
            check=True,
            capture_output=True,
        )
    version = subprocess.run(
        [str(binary), "--version"], check=False, capture_output=True, text=True
    ).stdout
    full = measured([str(binary), "init", "-y", str(repo)])
    syncs = []
    for n in range(rounds):
        change_one_file(repo, n)
        syncs.append(measured([str(binary), "sync", str(repo)]))
    return {"version": version.strip(), "full": full, "sync": syncs}


# -- report ---------------------------------------------------------------------------


def _report_cli(cli: dict[str, Any]) -> None:
    """The CLI's rows of the table."""
    full: Run = cli["full"]
    inc = median([r.wall_s for r in cli["incremental"]])
    print(
        f"{'strata index (CLI), full':58} {full.wall_s:8.2f}s {full.peak_rss_mb:8.0f}MB "
        f"{full.tree_rss_mb:8.0f}MB"
    )
    if full.neo4j is not None:
        print(f"  {full.neo4j.line()}")
    print(f"{'strata index (CLI), one-file change (median)':58} {inc:8.3f}s")
    alone = median([r.wall_s for r in cli["no_daemon"]])
    print(f"{'  the same with --no-daemon (a new process each time)':58} {alone:8.3f}s")
    if "warm" in cli:
        warm: Run = cli["warm"]
        print(
            f"{'  the same full index again, Neo4j warm (new repository)':58} {warm.wall_s:8.2f}s "
            f"{warm.peak_rss_mb:8.0f}MB"
        )
        if warm.neo4j is not None:
            print(f"    {warm.neo4j.line()}")


def report(
    files: int,
    lines: int,
    *,
    cli: dict[str, Any],
    wk: dict[str, Any] | None,
    cg: dict[str, Any] | None,
    lat: dict[str, float],
) -> None:
    full: Run = cli["full"]
    inc = median([r.wall_s for r in cli["incremental"]])
    print(f"\ntree: Django 5.2.8 sdist, {files:,} Python files, {lines:,} lines of Python")
    print(f"{'what':58} {'wall':>9} {'peak RSS':>10} {'tree RSS':>10}")
    _report_cli(cli)
    if wk is not None:
        print(
            f"{'webhook -> API -> worker, full (POST to job end)':58} {wk['full']:8.2f}s "
            f"{wk['peak_mb']:8.0f}MB"
        )
        laps = " ".join(f"{k} {v:.2f}" for k, v in wk["full_phases"].items())
        steps = " ".join(f"{k} {v:.2f}" for k, v in wk["full_tasks"].items())
        print(f"  worker full: index phases (s): {laps}\n    task steps (s): {steps}")
        print(
            f"{'  then its follow-ups (sync, settle, embedding jobs) until quiet':58} "
            f"{wk['followups']:8.2f}s"
        )
        print(
            f"{'webhook -> API -> worker, one-file change (median, quiet stack)':58} "
            f"{median(wk['incremental']):8.3f}s"
        )
        for n, (seconds, phases) in enumerate(zip(wk["incremental"], wk["phases"], strict=True)):
            laps = " ".join(f"{k} {v:.3f}" for k, v in phases.items())
            print(f"  worker one-file round {n}: {seconds:.3f}s; index phases (s): {laps}")
            steps = " ".join(f"{k} {v:.3f}" for k, v in wk["tasks"][n].items())
            print(f"    task steps (s): {steps}")
        for n, profile in enumerate(wk.get("profiles") or []):
            print(f"  worker profile, one-file round {n} (py-spy, code worker and its child):")
            print("\n".join("    " + line for line in profile))
    if cg is not None:
        sync = median([r.wall_s for r in cg["sync"]])
        print(
            f"{'codegraph ' + cg['version'] + ' init':58} {cg['full'].wall_s:8.2f}s "
            f"{cg['full'].peak_rss_mb:8.0f}MB {cg['full'].tree_rss_mb:8.0f}MB"
        )
        print(f"{'codegraph sync, one-file change (median)':58} {sync:8.3f}s")
    print(f"{'strata --help (median of 5)':58} {lat['help']:8.3f}s")
    if "graphql" in lat:
        print(f"{'strata graphql round trip (median of 5)':58} {lat['graphql']:8.3f}s")
    alone = median([r.wall_s for r in cli["no_daemon"]])
    print("\nratios (target):")
    print(f"  CLI one-file / CLI full            {inc / full.wall_s:6.1%}  (<= 3%)")
    print(f"  CLI one-file --no-daemon / full    {alone / full.wall_s:6.1%}")
    if wk is not None:
        one = median(wk["incremental"])
        print(f"  worker one-file                    {one * 1000:6.0f} ms (<= 300 ms)")
        print(f"  worker one-file / CLI full         {one / full.wall_s:6.1%}  (<= 3%)")
    if cg is not None:
        sync = median([r.wall_s for r in cg["sync"]])
        print(
            f"  CLI full / codegraph init          {full.wall_s / cg['full'].wall_s:6.2f}x "
            "(<= 1.0x milestone, <= 0.5x goal)"
        )
        if wk is not None:
            print(f"  worker full / codegraph init       {wk['full'] / cg['full'].wall_s:6.2f}x")
            print(
                f"  worker one-file / codegraph sync   {median(wk['incremental']) / sync:6.2f}x "
                "(<= 0.1x)"
            )
        print(f"  CLI one-file / codegraph sync      {inc / sync:6.2f}x")
        if "warm" in cli:
            warm_ratio = cli["warm"].wall_s / cg["full"].wall_s
            print(f"  CLI full, Neo4j warm / codegraph   {warm_ratio:6.2f}x")
    print(f"  CLI full peak RSS                  {full.peak_rss_mb:6.0f} MB (<= 1024 MB)")


def own_stack() -> None:
    """Point every STRATA_* setting this process and its children read at a stack of
    the bench's own: an empty data folder (the last run's is removed) and free ports.
    The compiled Neo4j launcher is shared with the checkout's, if it has one."""
    from strata.devstack.procs import free_port

    var = WORK / "stack"
    if var.exists():
        shutil.rmtree(var)
    (var / "cache").mkdir(parents=True)
    installed = ROOT / "var" / "cache" / "neo4j"
    if installed.is_dir():
        (var / "cache" / "neo4j").symlink_to(installed)
    bolt, redis, api = free_port(), free_port(), free_port()
    os.environ.update(
        STRATA_VAR_DIR=str(var),
        STRATA_MIRRORS_DIR=str(var / "mirrors"),
        STRATA_NEO4J_URI=f"bolt://127.0.0.1:{bolt}",
        STRATA_DEV_NEO4J_PORT=str(bolt),
        STRATA_REDIS_URL=f"redis://127.0.0.1:{redis}/0",
        STRATA_DEV_REDIS_PORT=str(redis),
        STRATA_API_PORT=str(api),
    )
    print(f"[race] own stack: {var} (bolt {bolt}, redis {redis}, api {api})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="one-file changes per contender")
    parser.add_argument("--skip-codegraph", action="store_true")
    parser.add_argument("--skip-worker", action="store_true")
    parser.add_argument(
        "--skip-warm",
        action="store_true",
        help="skip the second CLI full index (on the Neo4j the first one warmed)",
    )
    parser.add_argument(
        "--profile-worker", metavar="PY_SPY", help="sample the code worker with this py-spy"
    )
    parser.add_argument(
        "--dev-stack",
        action="store_true",
        help="race on the running dev stack and its graph (default: a fresh stack)",
    )
    args = parser.parse_args()
    if not args.dev_stack:
        own_stack()
    from strata.code import native

    built = native.inspect()  # what the CLI, the daemon and the worker will run
    print(f"[race] code layer {'compiled' if built.compiled else 'interpreted'} ({built.reason})")
    sdist = fetch_sdist()
    cli_repo = make_repo(sdist, "race-cli")
    files, lines = tree_size(cli_repo)
    wk = None
    stack = None
    with Stack() as running:  # the CLI writes into the same Neo4j the stack runs
        print(f"[race] strata CLI on {files:,} files", flush=True)
        cli = strata_cli(cli_repo, args.rounds)
        if not args.skip_worker:
            print("[race] strata webhook -> API -> worker", flush=True)
            wk = strata_worker(
                make_repo(sdist, "race-worker"), args.rounds, running, args.profile_worker
            )
            stack = running
        if not args.skip_warm:
            # The first full index ran on a Neo4j just started: its JIT compiled the
            # write path during that index. The same tree again, as a new repository
            # (parsed again: the extract cache is per repository), on the warm Neo4j.
            print("[race] strata CLI full again, on the warm Neo4j", flush=True)
            warm_name = f"race-cli-warm-{uuid.uuid4().hex[:8]}"  # new on a --dev-stack too
            cli["warm"] = through_daemon([STRATA, "index", str(cli_repo), "--repo", warm_name])
        lat = cli_latency(stack)
    cg = None
    if not args.skip_codegraph:
        print("[race] codegraph", flush=True)
        cg = codegraph(make_repo(sdist, "race-codegraph"), args.rounds)
    from strata.indexd import client

    client.stop_all(load_settings())  # the CLI's daemon holds the last tree's state
    report(files, lines, cli=cli, wk=wk, cg=cg, lat=lat)


if __name__ == "__main__":
    main()

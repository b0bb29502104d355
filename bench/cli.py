"""Start-up cost of the commands an agent calls in a loop: `strata --help` and
`strata graphql` round trips (medians of N fresh processes).

Starts its own Neo4j and Redis (bench/_stack.py) and the real API process,
creates a read key, then times, each in a new interpreter as an agent runs it:
``strata --help``, ``strata graphql --help``, and ``strata graphql '{ version }'``
in each ``--format``. Also prints the import-only floor (`python -c pass` and
importing the CLI) so the numbers can be read against the machine's load.

    .venv/bin/python bench/cli.py [--rounds 11] [--neo4j-port N --redis-port N]

Targets (issue 11, 2 cores): ``strata --help`` <= 0.3 s; a ``strata graphql``
round trip <= 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _stack import BenchStack, api_process

CLI = [sys.executable, "-c", "from strata.cli.main import main; main()"]
TARGETS = {"strata --help": 0.3, "strata graphql (json)": 0.5}


def wall(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv[-3:]} exited {done.returncode}: {done.stderr[-500:]!r}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--neo4j-port", type=int, default=0, help="default: a free port")
    parser.add_argument("--redis-port", type=int, default=0, help="default: a free port")
    args = parser.parse_args()
    rounds = args.rounds
    stack = BenchStack("cli", neo4j_port=args.neo4j_port, redis_port=args.redis_port)
    with stack, api_process(stack) as (base, _):
        token = stack.key("*")
        env = stack.env(STRATA_API_KEY=token)
        cases: dict[str, list[str]] = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "import strata.cli.main": [sys.executable, "-c", "import strata.cli.main"],
            "strata --help": [*CLI, "--help"],
            "strata graphql --help": [*CLI, "graphql", "--help"],
        }
        for fmt in ("json", "table", "compact"):
            cases[f"strata graphql ({fmt})"] = [
                *CLI, "graphql", "{ version }", "--url", base, "--format", fmt,
            ]  # fmt: skip
        cases["strata graphql (no --url)"] = [*CLI, "graphql", "{ version }"]
        env_default = {
            **env,
            "STRATA_API_HOST": base.split("//")[1].split(":")[0],
            "STRATA_API_PORT": base.rsplit(":", 1)[1],
        }
        load = os.getloadavg()[0]
        print(f"medians of {rounds} fresh processes; load average {load:.2f} on {os.cpu_count()}")
        for name, argv in cases.items():
            use = env_default if name.endswith("(no --url)") else env
            wall(argv, use)  # warm the page cache
            median = statistics.median(wall(argv, use) for _ in range(rounds))
            target = TARGETS.get(name)
            verdict = "" if target is None else (" met" if median <= target else " NOT met")
            print(
                f"{name:32} {median:7.3f} s" + (f"  (target {target} s{verdict})" if target else "")
            )


if __name__ == "__main__":
    main()

"""`strata` ends a run that built a large heap without the interpreter's teardown,
and only a successful one."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# A stand-in for the typer app: prints, maybe marks the heap done, then exits as click does.
SCRIPT = """
import atexit, sys
import strata.cli.root as root
from strata.cli import main as entry

def app():
    print("ran", flush=False)
    if {skip}:
        entry.skip_teardown()
    sys.exit({code})

root.app = app
atexit.register(lambda: print("teardown"))
sys.argv = ["strata", "index"]
entry.main()
"""


def _run(skip: bool, code: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT.format(skip=skip, code=code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_a_run_that_skips_teardown_ends_at_once_with_its_output() -> None:
    done = _run(skip=True, code=0)
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["ran"]  # printed (flushed), atexit never ran


@pytest.mark.parametrize(("skip", "code"), [(False, 0), (True, 1)])
def test_other_runs_and_failures_tear_down_as_usual(skip: bool, code: int) -> None:
    done = _run(skip=skip, code=code)
    assert done.returncode == code
    assert done.stdout.splitlines() == ["ran", "teardown"]

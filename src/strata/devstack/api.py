"""The one launcher of the API process, shared by the dev stack, the benchmarks and the tests.

The API runs as its own process (``uvicorn --factory strata_api.main:create``);
the core only builds that command line and starts it, it never imports
uvicorn or the API package.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Mapping
from typing import Final

import httpx

from strata.devstack.procs import Proc, wait_until
from strata.errors import EnvironmentProblem

API_FACTORY: Final = "strata_api.main:create"


def api_command(host: str, port: int, *, log_level: str | None = None) -> list[str]:
    """The command line of one API process on ``host:port`` (access log off)."""
    argv = [sys.executable, "-m", "uvicorn", "--factory", API_FACTORY]
    argv += ["--host", host, "--port", str(port), "--no-access-log"]
    if log_level is not None:
        argv += ["--log-level", log_level]
    return argv


def api_healthy(base_url: str, *, timeout: float = 0.5) -> bool:
    """True if ``GET {base_url}/healthz`` answers 200."""
    try:
        response = httpx.get(f"{base_url}/healthz", timeout=timeout)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


def launch_api(
    host: str,
    port: int,
    *,
    env: Mapping[str, str] | None = None,
    proc: Proc | None = None,
    log_level: str | None = None,
    timeout: float = 60.0,
) -> subprocess.Popen[bytes]:
    """Start the API process and return it once ``/healthz`` answers.

    ``env`` is added to this process's environment. With ``proc`` the API runs
    detached, with a pid file and a log (the dev stack); without, it is a plain
    child whose output is discarded (tests, benchmarks), stopped by the caller.
    If it exits or is not healthy within ``timeout`` it is stopped and an
    EnvironmentProblem says so (with the log tail when there is a log).
    """
    argv = api_command(host, port, log_level=log_level)
    if proc is not None:
        popen = proc.spawn(argv, env=env)
    else:
        popen = subprocess.Popen(
            argv,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    base = f"http://{host}:{port}"
    if wait_until(lambda: api_healthy(base), timeout=timeout, alive=lambda: popen.poll() is None):
        return popen
    if proc is not None:
        proc.stop(timeout=10)
        raise EnvironmentProblem(
            f"the API did not become healthy; last log lines:\n{proc.tail()}",
            hint=f"full log: {proc.log_file}",
        )
    popen.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(timeout=10)
    raise EnvironmentProblem(
        f"the API on {base} did not become healthy within {timeout:g}s",
        hint="run `python " + " ".join(argv[1:]) + "` in the foreground to see why",
    )

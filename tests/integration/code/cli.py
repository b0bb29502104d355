"""Run `strata` as its own process, as a user does, and read its summary table."""

from __future__ import annotations

import os
import subprocess
import sys

from strata.settings import Settings
from tests.conftest import settings_env


def cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    """`strata ...` in its own process, as a user runs it."""
    env = {**os.environ, **settings_env(settings), "COLUMNS": "250", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", "from strata.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )


def rows(output: str) -> dict[str, list[str]]:
    """The summary table's rows by commit prefix."""
    rows: dict[str, list[str]] = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.replace("┃", "│").split("│")]
        cells = [c for c in cells if c]
        if cells and len(cells[0]) == 12 and all(ch in "0123456789abcdef" for ch in cells[0]):
            rows[cells[0]] = cells
    return rows

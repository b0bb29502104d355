"""CPU seconds read from /proc, for the benches that say where a run's CPU went
(bench/race.py, bench/temporal.py). Nothing here is imported by the product."""

from __future__ import annotations

import os
from pathlib import Path


def stat_cpu_s(stat: Path) -> float:
    """User + system CPU seconds in a ``/proc/<pid>/stat`` (or ``task/<tid>/stat``)
    file; the fields after ``(comm)``, which may hold spaces."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

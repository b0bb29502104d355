"""Benchmark of the parsing half of the code layer: parse + extract, one core.

Walks one or more directory trees (or ``.zip`` archives), reads every file a
language adapter handles (into memory first, so disk time is not counted), then
times ``strata.code.languages.parse_file`` per file and prints files, lines, seconds
and lines/s per language, plus the total.

    .venv/bin/python bench/parse.py                       # this venv's site-packages
    .venv/bin/python bench/parse.py /usr/local/go/src ~/src/some-ts-repo
    .venv/bin/python bench/parse.py /usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip
    .venv/bin/python bench/parse.py --max-files 2000 --repeat 3

With ``--repeat N`` every language is timed N times and the median is printed.

Target: well over 50,000 lines/s per language for typical code (the whole code
pipeline, Neo4j writes included, targets 15,000 lines/s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import sysconfig
import time
import zipfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from strata.code.languages import adapter_for_path, parse_file

MAX_FILE_BYTES = 1_000_000  # generated bundles and vendored blobs are not typical code
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "target", "dist"})


def collect(roots: list[Path], max_files: int) -> dict[str, list[tuple[str, bytes]]]:
    """Files per language, read into memory; at most ``max_files`` per language."""
    found: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
    for root in roots:
        if root.suffix == ".zip":  # e.g. a JDK's lib/src.zip
            _collect_zip(root, max_files, found)
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS or folder == str(root))
            for name in sorted(files):
                adapter = adapter_for_path(name)
                if adapter is None or len(found[adapter.language]) >= max_files:
                    continue
                path = Path(folder, name)
                try:
                    if path.stat().st_size > MAX_FILE_BYTES:
                        continue
                    source = path.read_bytes()
                except OSError:
                    continue
                found[adapter.language].append((str(path.relative_to(root)), source))
    return found


def _collect_zip(archive: Path, max_files: int, found: dict[str, list[tuple[str, bytes]]]) -> None:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            adapter = adapter_for_path(info.filename)
            if adapter is None or info.file_size > MAX_FILE_BYTES:
                continue
            if len(found[adapter.language]) < max_files:
                found[adapter.language].append((info.filename, zf.read(info)))


def run(files: list[tuple[str, bytes]]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) to extract ``files``; CPU time is the one-core
    figure (the wall clock also counts whatever else the machine is doing)."""
    cpu, wall = time.process_time(), time.perf_counter()
    for path, source in files:
        parse_file(path, source)
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="*", type=Path, help="directories to parse")
    parser.add_argument("--max-files", type=int, default=1_000_000, help="per language")
    parser.add_argument("--repeat", type=int, default=1, help="timings per language (median)")
    args = parser.parse_args()
    roots = args.roots or [Path(sysconfig.get_paths()["purelib"])]

    by_language = collect(roots, args.max_files)
    print(f"roots: {', '.join(str(r) for r in roots)}")
    header = ("language", "files", "lines", "cpu s", "lines/s cpu", "wall s", "lines/s wall")
    print("{:<12}{:>8}{:>11}{:>9}{:>13}{:>9}{:>14}".format(*header))
    totals = [0, 0, 0.0, 0.0]
    for language in sorted(by_language):
        files = by_language[language]
        lines = sum(s.count(b"\n") + (0 if s.endswith(b"\n") or not s else 1) for _, s in files)
        parse_file(files[0][0], b"")  # compile the grammar's query outside the timing
        timings = [run(files) for _ in range(args.repeat)]
        cpu = statistics.median(t[0] for t in timings)
        wall = statistics.median(t[1] for t in timings)
        _row(language, len(files), lines, cpu, wall)
        totals = [totals[0] + len(files), totals[1] + lines, totals[2] + cpu, totals[3] + wall]
    _row("total", int(totals[0]), int(totals[1]), totals[2], totals[3])


def _row(label: str, files: int, lines: int, cpu: float, wall: float) -> None:
    cpu_rate = lines / cpu if cpu else 0.0
    wall_rate = lines / wall if wall else 0.0
    print(
        f"{label:<12}{files:>8}{lines:>11}{cpu:>9.2f}{cpu_rate:>13,.0f}{wall:>9.2f}{wall_rate:>14,.0f}"
    )


if __name__ == "__main__":
    main()

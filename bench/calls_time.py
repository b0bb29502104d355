"""The value flow's and the resolver's share of index time on Django (pure pipeline, no Neo4j).

Parses every Python file of the ``django/`` package of the pinned Django sdist in
this process (one core), builds the module index and resolves every file, and
prints wall time per phase, the part of parsing spent building the flow IR, the
part of resolving spent in the flow pass (solving on demand, refining calls,
implied edges), and peak RSS.

    .venv/bin/python bench/calls_time.py [--src /other/checkout/src]

``--src`` measures another checkout's code (the numbers before a change).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".cache"
ARCHIVE = "django-5.2.8.tar.gz"


def _timed(owner: Any, name: str, spent: list[float]) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - started

    setattr(owner, name, wrapper)


def _django_files(unpack: Path) -> dict[str, bytes]:
    root = unpack / "django-5.2.8"
    if not root.exists():
        with tarfile.open(CACHE / ARCHIVE) as tar:
            tar.extractall(unpack, filter="data")
    paths = sorted((root / "django").rglob("*.py"))
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in paths}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the strata code to time")
    # Unpacked outside the checkout: tests scan the tree's Python files.
    parser.add_argument("--unpack", type=Path, default=Path(tempfile.gettempdir()) / "strata-calls")
    args = parser.parse_args()
    sys.path.insert(0, str(args.src))
    from strata.code.flow import index as flow_index
    from strata.code.flow import python as flow_python
    from strata.code.languages import parse_file
    from strata.code.modules import ModuleIndex
    from strata.code.resolver import Resolver

    files = _django_files(args.unpack)
    building, flowing = [0.0], [0.0]
    _timed(flow_python, "build", building)
    for method in ("refine", "implied"):
        _timed(flow_index.FlowIndex, method, flowing)
    started = time.perf_counter()
    extracts = {path: parse_file(path, source) for path, source in files.items()}
    parsed = time.perf_counter()
    resolver = Resolver(ModuleIndex(extracts, []))
    indexed = time.perf_counter()
    calls = sum(len(resolver.resolve_file(path).calls) for path in extracts)
    resolved = time.perf_counter()
    lines = sum(e.lines for e in extracts.values())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    parse_s, resolve_s = parsed - started, resolved - indexed
    print(f"django 5.2.8: {len(files)} files, {lines:,} lines, {calls:,} call edges ({args.src})")
    print(f"parse   {parse_s:6.2f} s  (flow IR {building[0]:5.2f} s, {building[0] / parse_s:.0%})")
    print(f"index   {indexed - parsed:6.2f} s")
    print(
        f"resolve {resolve_s:6.2f} s  (flow pass {flowing[0]:5.2f} s, {flowing[0] / resolve_s:.0%})"
    )
    print(f"peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()

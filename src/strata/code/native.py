"""The code layer's hot modules compiled to C with mypyc, and the guard that keeps
a stale build from running.

Parsing and resolving are pure Python, typed strictly enough for mypyc to
compile them unchanged: on the Django 5.2.8 sdist the parse helpers take ~20%
less CPU and the resolver ~30% less, with the same call edges, for ~17% more
memory.

``strata dev compile`` (``scripts/bootstrap`` runs it; it needs
mypy, from the ``dev`` extra, and a C compiler) writes one extension module
beside each source in :data:`COMPILED`, their shared library
(``strata/code/_mypyc__mypyc*.so``) and a manifest of the sources' hashes.
Python prefers an extension module to a source of the same name, so an edited
source would silently run its old build: :func:`guard`, called when
:mod:`strata.code` is imported, compares the manifest with the sources, and when
any differs (or ``STRATA_NATIVE=0``) every compiled module loads from its source
for the whole process. Without a build nothing changes. Compiled and interpreted
code pickle extracts alike (as constructor calls), so caches and parse helpers
do not care which ran.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from strata.errors import EnvironmentProblem

log = logging.getLogger(__name__)

# Modules, relative to the ``strata`` package root, compiled together into one
# shared library (calls between them are C calls). Package ``__init__`` files stay
# interpreted; so does ``modules.py`` (its index is a weak-reference key, which a
# compiled class cannot be).
COMPILED: tuple[str, ...] = (
    "code/model.py",
    "code/resolver.py",
    *(
        f"code/flow/{name}.py"
        for name in (
            "bags",
            "demand",
            "exports",
            "guess",
            "imports",
            "index",
            "model",
            "mro",
            "public_api",
            "python",
            "shape",
            "solver",
            "statements",
            "values",
        )
    ),
    *(
        f"code/languages/{name}.py"
        for name in (
            "_ecmascript",
            "_link",
            "_overloads",
            "_routes",
            "_text",
            "_unit",
            "base",
            "csharp",
            "go",
            "java",
            "javascript",
            "kotlin",
            "module_system",
            "php",
            "python",
            "rust",
            "typescript",
        )
    ),
)
GROUP = "strata.code._mypyc"  # the shared library: strata/code/_mypyc__mypyc*.so
MANIFEST = "_native.json"  # beside the package root: strata/_native.json
DISABLE_ENV = "STRATA_NATIVE"  # "0": run the interpreted sources even when built
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # .../strata


@dataclass(frozen=True, slots=True)
class Status:
    """Whether this process runs the compiled modules, and why not when it does not."""

    compiled: bool
    reason: str


def module_name(relative: str, package: str = "strata") -> str:
    """``code/flow/demand.py`` -> ``strata.code.flow.demand``."""
    return f"{package}." + relative.removesuffix(".py").replace("/", ".")


def _suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def _hashes(root: Path, modules: Sequence[str]) -> dict[str, str]:
    return {m: hashlib.sha256((root / m).read_bytes()).hexdigest() for m in modules}


def _built(root: Path, relative: str) -> Path:
    return root / (relative.removesuffix(".py") + _suffix())


def inspect(root: Path = PACKAGE_ROOT, modules: Sequence[str] = COMPILED) -> Status:
    """Whether the build under ``root`` matches its sources and this interpreter."""
    if os.environ.get(DISABLE_ENV, "1").strip() == "0":
        return Status(False, f"{DISABLE_ENV}=0")
    manifest = root / MANIFEST
    if not manifest.exists():
        leftovers = [m for m in modules if _built(root, m).exists()]
        if leftovers:
            return Status(False, f"extension modules without a manifest ({leftovers[0]})")
        return Status(False, "not built")
    try:
        recorded = json.loads(manifest.read_text())
    except (OSError, ValueError) as exc:
        return Status(False, f"unreadable manifest: {exc}")
    if recorded.get("suffix") != _suffix():
        return Status(False, f"built for {recorded.get('suffix')}, running {_suffix()}")
    sources: dict[str, str] = recorded.get("sources", {})
    if sorted(sources) != sorted(modules):
        return Status(False, "the build compiled another module list")
    missing = [m for m in modules if not _built(root, m).exists()]
    if missing:
        return Status(False, f"no extension module for {missing[0]}")
    changed = [m for m, digest in _hashes(root, modules).items() if sources[m] != digest]
    if changed:
        more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
        return Status(False, f"{changed[0]}{more} changed since the build")
    return Status(True, "built from these sources")


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Loads the named modules from their ``.py`` files, past their extension modules."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(fullname)
        if source is None:
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def prefer_sources(root: Path, modules: Sequence[str], package: str) -> None:
    """Make this process load ``modules`` from their sources, past any extension module."""
    sources = {module_name(m, package): root / m for m in modules}
    sys.meta_path.insert(0, _SourceFirst(sources))


def choose(root: Path, modules: Sequence[str], package: str) -> Status:
    """Run the build of ``modules`` when it matches their sources, else every one of
    them from its source (a mix would call stale code)."""
    status = inspect(root, modules)
    if not status.compiled and any(_built(root, m).exists() for m in modules):
        chosen = os.environ.get(DISABLE_ENV, "").strip() == "0"  # asked for: no warning
        log.log(
            logging.INFO if chosen else logging.WARNING,
            "compiled code modules not used (%s); running the sources",
            status.reason,
        )
        prefer_sources(root, modules, package)
    return status


_STATUS: Status | None = None


def guard() -> Status:
    """:func:`choose` for Strata's own modules, once per process (at first import of
    :mod:`strata.code`, before any compiled module)."""
    global _STATUS  # noqa: PLW0603 - one decision per process, taken at first import
    if _STATUS is None:
        _STATUS = choose(PACKAGE_ROOT, COMPILED, "strata")
    return _STATUS


def build(
    root: Path = PACKAGE_ROOT,
    modules: Sequence[str] = COMPILED,
    *,
    group: str = GROUP,
    work: Path | None = None,
) -> Status:
    """Compile ``modules`` (relative to the package at ``root``) in place into the
    shared library ``group``; a no-op when the manifest already matches."""
    current = inspect(root, modules)
    if current.compiled:
        return current
    try:  # build-time only: mypy comes with the dev extra
        from mypyc.build import mypycify
        from setuptools import setup  # type: ignore[import-untyped]
    except ImportError as exc:
        problem = f"compiling needs mypy and setuptools (the dev extra): {exc}"
        raise EnvironmentProblem(problem) from exc

    src = root.parent
    work = work or src.parent / "build" / "mypyc"
    (root / MANIFEST).unlink(missing_ok=True)
    digests = _hashes(root, modules)
    cwd = Path.cwd()
    os.chdir(src)  # mypyc names modules by path, build_ext --inplace writes beside them
    try:
        extensions = mypycify(
            [str((root / m).relative_to(src)) for m in modules],
            opt_level="3",
            group_name=group,
            target_dir=str(work / "c"),
        )
        setup(
            name="strata-native",
            ext_modules=extensions,
            script_args=["--quiet", "build_ext", "--inplace", "--build-temp", str(work / "o")],
        )
    except SystemExit as exc:  # how mypyc and setuptools report a type or compiler error
        problem = f"the build failed (exit {exc.code}; its output is above)"
        raise EnvironmentProblem(problem) from exc
    finally:
        os.chdir(cwd)
    (root / MANIFEST).write_text(
        json.dumps({"suffix": _suffix(), "sources": digests}, indent=1, sort_keys=True)
    )
    return inspect(root, modules)

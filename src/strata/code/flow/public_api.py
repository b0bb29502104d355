"""A Python library's exported API: what ``import pkg`` promises its users.

A symbol is exported (entrypoint kind ``public_api``) when

- a module's ``__all__`` lists it: declared there, or imported there and re-exported;
- a package's ``__init__.py`` without ``__all__`` declares it or imports it by a
  public name (``from .api import get``, ``from .api import get as get``), or
  pulls it in with ``from .api import *`` (then what ``api``'s ``__all__`` lists,
  else its public top-level names).

Names starting with ``_`` are private by convention and never exported without
``__all__``; test files and ``tests/`` packages export nothing. Pure: it reads
parsed files, their import scopes and the flow IR (``FileFlow.exports``).

Other languages mark theirs through :meth:`ModuleSystem.public_api` (TypeScript and
JavaScript: what a package's entry file exports; Rust: the ``pub`` items ``lib.rs``
reaches).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable

from strata.code.model import FileExtract, SymbolDef
from strata.code.modules import FileScope, ModuleIndex, ModuleTarget, SymbolTarget

PUBLIC_KINDS = frozenset({"function", "class", "constant"})
_TEST_DIRS = frozenset({"tests", "test"})


def exported_api(
    index: ModuleIndex,
    scope: Callable[[str], FileScope],
    symbols: dict[tuple[str, str], SymbolDef],
) -> dict[str, frozenset[str]]:
    """Per file, the qualnames of its symbols some module of the repository exports."""
    found: dict[str, set[str]] = defaultdict(set)

    def mark(target: SymbolTarget) -> None:
        if (target.path, target.qualname) in symbols:
            found[target.path].add(target.qualname)

    for path, extract in index.files.items():
        listed = _listed(extract)
        # A plain module without __all__ exports nothing: its scope is not built (on
        # Django two thirds of the modules; each incremental run built all 879).
        if _exporting(path, extract) and (listed is not None or _is_package(path)):
            for target in _exports_of(index, path, listed, scope(path)):
                mark(target)
    # Other languages' rules (entry files, `export`, `pub`) live in their module systems.
    systems = {id(s): s for p in index.files if (s := index.system_of(p)) is not None}
    for system in systems.values():
        for target in system.public_api(index, scope):
            mark(target)
    return {path: frozenset(names) for path, names in found.items()}


def _exports_of(
    index: ModuleIndex, path: str, listed: tuple[str, ...] | None, scope: FileScope
) -> Iterable[SymbolTarget]:
    """What one module exports (its ``__all__``; an ``__init__`` its public names)."""
    top = index.top_level.get(path, {})
    if listed is not None:
        for name in listed:
            own, bound = top.get(name), scope.bindings.get(name)
            if own is not None:
                yield SymbolTarget(path, own.qualname)
            elif isinstance(bound, SymbolTarget):
                yield bound
        return
    if not _is_package(path):
        return
    for name, symbol in top.items():
        if _public(name) and symbol.kind in PUBLIC_KINDS:
            yield SymbolTarget(path, symbol.qualname)
    for name, bound in scope.bindings.items():
        # Function-local imports are keyed `function\0name`: not the module's names.
        if "\x00" not in name and _public(name) and isinstance(bound, SymbolTarget):
            yield bound
    for module in scope.wildcards:
        yield from _star(index, module)


def _is_package(path: str) -> bool:
    return posixpath.basename(path) in ("__init__.py", "__init__.pyi")


def _exporting(path: str, extract: FileExtract) -> bool:
    if extract.language != "python" or extract.is_test_file:
        return False
    return not _TEST_DIRS & set(path.split("/")[:-1])


def _listed(extract: FileExtract) -> tuple[str, ...] | None:
    flow = getattr(extract, "flow", None)  # extracts cached before the flow lack it
    return getattr(flow, "exports", None)


def _star(index: ModuleIndex, module: ModuleTarget) -> Iterable[SymbolTarget]:
    """What ``from module import *`` brings in: its ``__all__``, else its public names."""
    for path in module.paths:
        extract = index.files.get(path)
        if extract is None:
            continue
        listed = _listed(extract)
        top = index.top_level.get(path, {})
        for name, symbol in top.items():
            if (name in listed) if listed is not None else _public(name):
                yield SymbolTarget(path, symbol.qualname)


def _public(name: str) -> bool:
    return not name.startswith("_")

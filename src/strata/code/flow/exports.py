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
        if not _exporting(path, extract):
            continue
        listed = _listed(extract)
        bindings = scope(path).bindings
        if listed is not None:
            for name in listed:
                own = index.top_level.get(path, {}).get(name)
                bound = bindings.get(name)
                if own is not None:
                    mark(SymbolTarget(path, own.qualname))
                elif isinstance(bound, SymbolTarget):
                    mark(bound)
            continue
        if posixpath.basename(path) not in ("__init__.py", "__init__.pyi"):
            continue
        for name, symbol in index.top_level.get(path, {}).items():
            if _public(name) and symbol.kind in PUBLIC_KINDS:
                mark(SymbolTarget(path, symbol.qualname))
        for name, bound in bindings.items():
            # Function-local imports are keyed `function\0name`: not the module's names.
            if "\x00" not in name and _public(name) and isinstance(bound, SymbolTarget):
                mark(bound)
        for module in scope(path).wildcards:
            for target in _star(index, module):
                mark(target)
    return {path: frozenset(names) for path, names in found.items()}


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

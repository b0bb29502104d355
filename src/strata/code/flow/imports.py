"""Which files an absolute Python import may reach, where the standard library wins.

A file answers to every dotted suffix of its path (the repository root is not
always an import root), so ``pkg/json/__init__.py`` answers to ``json`` too. In
Python 3 imports are absolute: ``import json`` inside ``pkg`` is the standard
library, and only ``from . import json`` or ``import pkg.json`` reach the
subpackage. A standard-library name therefore binds a repository file only
when that file sits at an import root: the directory above the module's first
part is no package (holds no ``__init__.py``).

Pure; :class:`strata.code.languages.python.PythonModules` binds Python imports and calls
:func:`absolute_paths` for ``import m`` / ``from m import x`` with no leading dot.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Iterable

STDLIB = frozenset(sys.stdlib_module_names)


def scoped(function: str, name: str) -> str:
    """The binding key of ``name`` imported inside ``function`` (file-wide keys are the
    bare name; a NUL never occurs in a name)."""
    return f"{function}\x00{name}"


def package_dirs(paths: Iterable[str]) -> frozenset[str]:
    """Directories that are Python packages (they hold an ``__init__.py``)."""
    return frozenset(
        posixpath.dirname(p)
        for p in paths
        if posixpath.basename(p) in ("__init__.py", "__init__.pyi")
    )


def absolute_paths(
    module: str, candidates: Iterable[str], packages: frozenset[str]
) -> tuple[str, ...]:
    """The ``candidates`` (files answering to ``module``) an absolute import reaches."""
    found = tuple(candidates)
    if module.split(".", 1)[0] not in STDLIB:
        return found
    return tuple(p for p in found if _at_import_root(module, p, packages))


def _at_import_root(module: str, path: str, packages: frozenset[str]) -> bool:
    parts = posixpath.splitext(path)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    depth = len(module.split("."))
    if len(parts) < depth or parts[-depth:] != module.split("."):
        return True  # not a suffix match: leave it to the caller's rules
    root = "/".join(parts[:-depth])
    return root == "" or root not in packages

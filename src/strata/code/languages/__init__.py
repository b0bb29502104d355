"""Language adapters: one per language, each a tree-sitter grammar, a query file
and a module system.

``parse_file(path, source)`` is the entry point: it picks the adapter by file
extension and returns the file's :class:`~strata.code.model.FileExtract`.
:func:`module_system_for` gives the
:class:`~strata.code.languages.module_system.ModuleSystem` of a language: module
names, import binding, namespace siblings, manifests and the few resolution
rules that differ (implicit ``this``, receiver variables, submodules, fully
qualified names). :mod:`strata.code.modules`, :mod:`strata.code.resolver` and
:mod:`strata.code.projection` only call those hooks.

Adding a language is one adapter module (its ``LanguageAdapter`` subclass and,
unless it shares one, its ``ModuleSystem`` subclass), one
``queries/<language>.scm`` and one line in ``ADAPTERS``; around them, the
grammar pin (``pyproject.toml``, ``constraints.txt``, a mypy override), a
fixture project, its tests, and, for a manifest of a new ecosystem, that
ecosystem in the ontology's ``Package.ecosystem`` enum. Kotlin shares Java's
module system; TypeScript, TSX and JavaScript share one.

Conventions every adapter keeps, on top of those in :mod:`strata.code.model`:

- A symbol's lines start at its first decorator, annotation, attribute or
  ``export`` keyword (doc comments are not part of it); ``body_hash`` covers the
  same text. Decorators are recorded without their marker (``app.get("/x")``,
  ``Override``, ``HttpGet("{id}")``, ``derive(Debug)``).
- Any repeated qualname in a file gets ``#2``, ``#3`` in source order (Java and
  C# overloads, property setters, redefinitions), except overload stubs: Python
  ``@overload`` functions and TypeScript overload signatures fold into the
  implementation that follows them (:mod:`._overloads`), which keeps the plain name.
- Calls made by decorators belong to the enclosing scope (they run there).
- Receivers are as written (whitespace collapsed, at most 200 characters),
  except: the parent-class receivers ``super()``/``super(C, self)`` (Python),
  ``base`` (C#) and ``parent`` (PHP) read ``super``; inside a Go method its
  receiver variable reads ``self`` (``s.db`` -> ``self.db``); in PHP ``$this``
  reads ``this`` (``$this->repo`` -> ``this.repo``) and ``static`` reads
  ``self``. The callee keeps the written text.
- One :class:`~strata.code.model.Import` per imported name. A JavaScript default
  import is ``names=("default",)`` with the local name as alias; a namespace
  import (``import * as ns``, Go alias) is an alias without names; wildcards
  are ``names=("*",)`` (a Go dot import also keeps its written alias ``.``),
  except in Java and Kotlin, whose module reads ``a.b.*``. PHP modules are
  fully qualified names without the leading backslash (``App\\Models\\Cart``)
  or, for ``require``/``include``, the literal path (``__DIR__ . '/x.php'`` is
  ``./x.php``).
- Declared types (``FileExtract.types``) are type names without pointers,
  references, ``dyn``, nullability and type arguments (``Box``/``Rc``/``Arc``
  and an awaited ``Promise`` are looked through); ``var``/``dynamic`` are none.
  TypeScript overload signatures fold into their implementation (or the first
  signature): no ``#2`` for them.
- Synthetic symbols (kind ``function``) stand for code that has no declaration:
  jest/vitest ``describe``/``it``/``test`` calls (``describe:Cart > it:adds``)
  and inline HTTP handlers (``route:GET /users``). Only ``it``/``test`` carry a
  ``test_framework``.
- Entrypoints: ``http <METHODS> <path>`` (methods comma-joined, ``ANY`` when
  unknown, class and router prefixes joined), ``cli <command>``, ``__main__``,
  ``func main`` (Go), ``fn main`` (Rust), ``static void main`` (Java),
  ``fun main`` (Kotlin, top level), ``static void Main`` (C#, also for
  top-level statements), ``front controller`` (a PHP ``index.php``). A route
  whose handler is not a symbol of the file is recorded on the file instead
  (Laravel ``Route::get(...)`` always is).
- ``frameworks`` is what the imports show plus every ``test_framework`` and
  ``framework`` found on the file's symbols.
"""

from __future__ import annotations

import posixpath

from strata.code.languages.base import LanguageAdapter
from strata.code.languages.csharp import CSharpAdapter
from strata.code.languages.go import GoAdapter
from strata.code.languages.java import JavaAdapter
from strata.code.languages.javascript import JavaScriptAdapter
from strata.code.languages.kotlin import KotlinAdapter
from strata.code.languages.module_system import ModuleSystem
from strata.code.languages.php import PhpAdapter
from strata.code.languages.python import PythonAdapter
from strata.code.languages.rust import RustAdapter
from strata.code.languages.typescript import TsxAdapter, TypeScriptAdapter
from strata.code.model import FileExtract
from strata.errors import ValidationError

ADAPTERS: tuple[LanguageAdapter, ...] = (
    PythonAdapter(),
    TypeScriptAdapter(),
    TsxAdapter(),
    JavaScriptAdapter(),
    GoAdapter(),
    JavaAdapter(),
    RustAdapter(),
    CSharpAdapter(),
    KotlinAdapter(),
    PhpAdapter(),
)

_BY_EXTENSION: dict[str, LanguageAdapter] = {
    ext: adapter for adapter in ADAPTERS for ext in adapter.extensions
}
_BY_LANGUAGE: dict[str, LanguageAdapter] = {adapter.language: adapter for adapter in ADAPTERS}


def adapter_for_language(language: str) -> LanguageAdapter | None:
    """The adapter whose ``language`` (as in ``FileExtract.language``) this is, or None."""
    return _BY_LANGUAGE.get(language)


def module_system_for(language: str) -> ModuleSystem | None:
    """The module system of a language's files, or None for a language no adapter has."""
    adapter = _BY_LANGUAGE.get(language)
    return adapter.module_system if adapter is not None else None


def adapter_for_path(path: str) -> LanguageAdapter | None:
    """The adapter for the file's extension (case-insensitive), or None."""
    ext = posixpath.splitext(path)[1].lower()
    return _BY_EXTENSION.get(ext)


def parse_file(path: str, source: bytes) -> FileExtract:
    """Extract ``source`` (the file at repository-relative ``path``).

    Raises :class:`~strata.errors.ValidationError` for a file no adapter
    handles; check :func:`adapter_for_path` first to skip those.
    """
    adapter = adapter_for_path(path)
    if adapter is None:
        raise ValidationError(
            f"no language adapter for {path!r}", hint="check adapter_for_path first", path=path
        )
    return adapter.extract(path, source)


__all__ = [
    "ADAPTERS",
    "LanguageAdapter",
    "ModuleSystem",
    "adapter_for_language",
    "adapter_for_path",
    "module_system_for",
    "parse_file",
]

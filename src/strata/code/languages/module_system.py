"""How the files of one language family see each other: the module system.

Each adapter names a :class:`ModuleSystem` (adapters whose files import each
other share one, e.g. TypeScript, TSX and JavaScript). It says which module
names a file answers to, what an import binds, which files share a namespace
without imports, which manifest files make a package, and the few resolution
rules that differ between languages. :mod:`strata.code.modules` and
:mod:`strata.code.resolver` only call these hooks; they name no language.

The binding types (what an import reaches) live here too, so module systems
need nothing from the modules they serve at import time.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from strata.code.languages._text import parameter_range
from strata.code.model import FileExtract, Import, SymbolDef

if TYPE_CHECKING:
    from strata.code.modules import ModuleIndex


@dataclass(frozen=True, slots=True)
class PackageInfo:
    """A package detected from a manifest file: its directory ('' = repo root)."""

    path: str
    name: str
    ecosystem: str
    manifest: str
    # the package's entry files as its manifest names them, relative to ``path``
    entries: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SymbolTarget:
    path: str
    qualname: str


@dataclass(frozen=True, slots=True)
class ModuleTarget:
    """A module of the repository (one or more files) or an external one (no paths)."""

    name: str
    paths: tuple[str, ...] = ()

    @property
    def external(self) -> bool:
        return not self.paths


Binding = SymbolTarget | ModuleTarget


def binding_paths(binding: Binding) -> tuple[str, ...]:
    """The repository files a binding reaches (none for an external module)."""
    return (binding.path,) if isinstance(binding, SymbolTarget) else binding.paths


@dataclass(slots=True)
class FileScope:
    """What names a file sees through its imports."""

    bindings: dict[str, Binding] = field(default_factory=dict)
    wildcards: list[ModuleTarget] = field(default_factory=list)
    imports: list[tuple[Import, list[Binding]]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Manifest:
    """A manifest file that makes its directory a package.

    ``filename`` is an exact base name, or ``*.<suffix>`` for any file with that
    suffix. ``name_pattern``'s first group, searched in the first 20 kB, is the
    package name; without a match the name is the file's stem (suffix
    manifests) or the directory's name.
    """

    filename: str
    ecosystem: str
    name_pattern: re.Pattern[bytes] | None = None
    # every match's first group, in the first 20 kB, is an entry file of the package
    entry_pattern: re.Pattern[bytes] | None = None

    def entries(self, content: bytes) -> tuple[str, ...]:
        """The entry files the manifest names (``package.json`` ``main``, ``types``...)."""
        if self.entry_pattern is None:
            return ()
        found = (
            m.decode(errors="replace").strip() for m in self.entry_pattern.findall(content[:20000])
        )
        return tuple(dict.fromkeys(e for e in found if e))

    def matches(self, basename: str) -> bool:
        if self.filename.startswith("*."):
            return basename.endswith(self.filename[1:])
        return basename == self.filename

    def package_name(self, path: str, content: bytes) -> str:
        if self.name_pattern is not None:
            match = self.name_pattern.search(content[:20000])
            name = match.group(1).decode(errors="replace").strip() if match else ""
            if name:
                return name
        base = posixpath.basename(path)
        if self.filename.startswith("*."):
            return base[: -len(self.filename) + 1]
        return posixpath.basename(posixpath.dirname(path))


class ModuleSystem:
    """One family's module naming, import binding and resolution rules.

    Subclasses set ``family`` (the key of their module names in the index) and
    override what their languages need; the defaults bind nothing.
    """

    family: ClassVar[str]
    manifests: ClassVar[tuple[Manifest, ...]] = ()
    # A class body is a scope of its methods: a bare name may be a member (implicit `this`).
    class_body_is_scope: ClassVar[bool] = False
    # A bare call nobody else declares may be a member of the caller's own class.
    bare_calls_reach_own_class: ClassVar[bool] = False
    # Methods name their receiver variable: `v.m()` may be a method of the method's own type.
    receiver_variable_is_self: ClassVar[bool] = False
    # A type implements an interface by having its methods (a call through it may run them).
    structural_interfaces: ClassVar[bool] = False
    # Overloads differ by their parameters: a call reaches the one its arguments fit.
    overloads_by_arity: ClassVar[bool] = False

    def module_names(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        """The names a file answers to; the first is the one shown to people."""
        return []

    def bind(
        self, index: ModuleIndex, path: str, extract: FileExtract, imp: Import, scope: FileScope
    ) -> list[Binding]:
        """Record what ``imp`` binds in ``scope``; return every binding it made."""
        return []

    def siblings(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        """Files that share a namespace with ``path`` without imports."""
        return []

    def submodule(
        self, index: ModuleIndex, module: ModuleTarget, rest: list[str]
    ) -> ModuleTarget | None:
        """``module.rest...`` as a module of the repository, where dotted access reaches one."""
        return None

    def reexported(
        self, index: ModuleIndex, module: ModuleTarget, name: str
    ) -> SymbolTarget | None:
        """``name`` of a module that is not one of its top-level symbols: what it passes
        on from other modules (a barrel file), where the language re-exports."""
        return None

    def public_api(
        self, index: ModuleIndex, scope: Callable[[str], FileScope]
    ) -> Iterable[SymbolTarget]:
        """The declarations this family's libraries export to their users (entrypoints
        of kind ``public_api``), found from the packages' entry files; none by default."""
        return ()

    def accepts(self, symbol: SymbolDef, arity: int) -> bool | None:
        """Whether a call with ``arity`` arguments fits ``symbol`` (None: cannot tell)."""
        if not self.overloads_by_arity or not symbol.signature:
            return None
        accepted = parameter_range(symbol.signature, symbol.name)
        if accepted is None:
            return None
        fewest, most = accepted
        return fewest <= arity and (most is None or arity <= most)

    def absolute(self, index: ModuleIndex, name: str) -> SymbolTarget | None:
        """A name written fully qualified, found without an import."""
        return None

    def qualified_name(
        self, module: str | None, extract: FileExtract, symbol: SymbolDef
    ) -> str | None:
        """The symbol's name as the language writes it from outside (None: ``path:qualname``)."""
        return None

    # ---- helpers for subclasses

    def modules(self, index: ModuleIndex, name: str) -> ModuleTarget:
        """The repository files answering to ``name`` in this family."""
        return index.modules(self.family, name)

    def package_siblings(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        """The other files whose package (namespace) module is the file's package."""
        if not extract.package:
            return []
        return [p for p in index.by_module.get((self.family, extract.package), []) if p != path]

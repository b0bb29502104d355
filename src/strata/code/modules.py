"""Module names, packages and import bindings: how files see each other.

Which module names a file answers to, which manifest (package) it belongs to,
and what each of its imports binds (a symbol, a module of the repository, or
something external) are decided by the module system of the file's language
adapter (:mod:`strata.code.languages.module_system`); this module indexes the
answers. Pure: it works on parsed files and the tree listing only.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Mapping

from strata.code.languages import ADAPTERS, module_system_for
from strata.code.languages.module_system import (
    Binding,
    FileScope,
    Manifest,
    ModuleSystem,
    ModuleTarget,
    PackageInfo,
    SymbolTarget,
    binding_paths,
)
from strata.code.model import FileExtract, SymbolDef

__all__ = [
    "FAMILY",
    "MANIFESTS",
    "Binding",
    "FileScope",
    "ModuleIndex",
    "ModuleTarget",
    "PackageInfo",
    "SymbolTarget",
    "binding_paths",
    "detect_packages",
    "is_manifest",
    "package_of",
]

# language -> module system family, from the adapter registry
FAMILY: Mapping[str, str] = {a.language: a.module_system.family for a in ADAPTERS}

_SYSTEMS: dict[str, ModuleSystem] = {a.module_system.family: a.module_system for a in ADAPTERS}
_MANIFESTS: tuple[Manifest, ...] = tuple(
    dict.fromkeys(m for system in _SYSTEMS.values() for m in system.manifests)
)

# exact manifest file names -> ecosystem (suffix manifests: see is_manifest)
MANIFESTS: Mapping[str, str] = {
    m.filename: m.ecosystem for m in _MANIFESTS if not m.filename.startswith("*.")
}


_BY_FILENAME: dict[str, Manifest] = {
    m.filename: m for m in reversed(_MANIFESTS) if not m.filename.startswith("*.")
}
_BY_SUFFIX: tuple[Manifest, ...] = tuple(m for m in _MANIFESTS if m.filename.startswith("*."))
_SUFFIXES = tuple(m.filename[1:] for m in _BY_SUFFIX)


def _manifest_for(basename: str) -> Manifest | None:
    # called for every tree entry: one dict probe and one endswith in the common case
    found = _BY_FILENAME.get(basename)
    if found is not None or not basename.endswith(_SUFFIXES):
        return found
    return next((m for m in _BY_SUFFIX if m.matches(basename)), None)


def is_manifest(path: str) -> bool:
    """Whether a module system reads the file at ``path`` as a package manifest."""
    return _manifest_for(posixpath.basename(path)) is not None


def detect_packages(paths: list[str], manifests: dict[str, bytes]) -> list[PackageInfo]:
    """Packages from manifest files in the tree (``manifests``: path -> content)."""
    found: dict[str, PackageInfo] = {}
    for path in paths:
        manifest = _manifest_for(posixpath.basename(path))
        if manifest is None:
            continue
        directory = posixpath.dirname(path)
        if directory in found and found[directory].ecosystem == manifest.ecosystem:
            continue
        content = manifests.get(path, b"")
        name = manifest.package_name(path, content)
        found.setdefault(
            directory,
            PackageInfo(
                directory, name or "(root)", manifest.ecosystem, path, manifest.entries(content)
            ),
        )
    return sorted(found.values(), key=lambda p: p.path)


def package_of(path: str, packages: list[PackageInfo]) -> PackageInfo | None:
    """The nearest package whose directory contains the file."""
    best: PackageInfo | None = None
    for package in packages:
        prefix = package.path + "/" if package.path else ""
        if path.startswith(prefix) and (best is None or len(package.path) > len(best.path)):
            best = package
    return best


class ModuleIndex:
    """Module names of every parsed file, and import resolution against them."""

    def __init__(
        self,
        files: dict[str, FileExtract],
        packages: list[PackageInfo],
        previous: ModuleIndex | None = None,
    ) -> None:
        """``previous``: the index of the last run of the same repository, whose tables
        are taken over when only file contents changed and every changed file answers
        to the names it did (a push: ~20 ms of Django's 2,864 files saved); otherwise,
        and without it, every file is read."""
        self.files = files
        self.packages = packages
        self.by_module: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.module_of: dict[str, str] = {}
        self.top_level: dict[str, dict[str, SymbolDef]] = {}
        self.by_dir: dict[str, list[str]] = defaultdict(list)
        self._names_of: dict[str, list[str]] = {}
        self._by_ecosystem: dict[str, list[PackageInfo]] = defaultdict(list)
        for package in packages:
            self._by_ecosystem[package.ecosystem].append(package)
        if previous is not None and self._take_over(previous):
            return
        for path, extract in files.items():
            self.by_dir[posixpath.dirname(path)].append(path)
            self.top_level[path] = _top_level(extract)
            system = module_system_for(extract.language)
            if system is None:
                continue
            names = self._names_of[path] = system.module_names(self, path, extract)
            if names:
                self.module_of[path] = names[0]
            for name in names:
                self.by_module[(system.family, name)].append(path)

    def _take_over(self, previous: ModuleIndex) -> bool:
        """Share ``previous``'s tables if they are what a new build would make: the same
        paths in the same order, the same packages, each changed file of the same
        language and answering to the same module names (tables are never changed
        after they are built, so the two indexes may share them)."""
        if previous.packages != self.packages or list(previous.files) != list(self.files):
            return False
        before = previous.files
        changed = {path: e for path, e in self.files.items() if before[path] is not e}
        for path, extract in changed.items():
            if extract.language != before[path].language:
                return False
            system = module_system_for(extract.language)
            names = system.module_names(self, path, extract) if system is not None else []
            if names != previous._names_of.get(path, []):
                return False
        self.by_module = previous.by_module
        self.module_of = previous.module_of
        self.by_dir = previous.by_dir
        self._names_of = previous._names_of
        self.top_level = dict(previous.top_level)
        for path, extract in changed.items():
            self.top_level[path] = _top_level(extract)
        return True

    def system_of(self, path: str) -> ModuleSystem | None:
        """The module system of an indexed file's language."""
        return module_system_for(self.files[path].language)

    def packages_in(self, ecosystem: str) -> list[PackageInfo]:
        """The detected packages of one ecosystem, in path order."""
        return self._by_ecosystem.get(ecosystem, [])

    def module_names(self, family: str, path: str, extract: FileExtract) -> list[str]:
        """The names a file answers to (also for a file no longer in the index)."""
        system = _SYSTEMS.get(family)
        return system.module_names(self, path, extract) if system is not None else []

    def scope(self, path: str) -> FileScope:
        """What each import of the file binds."""
        extract = self.files[path]
        system = module_system_for(extract.language)
        scope = FileScope()
        if system is None:
            return scope
        for imp in extract.imports:
            bound = system.bind(self, path, extract, imp, scope)
            scope.imports.append((imp, bound))
        return scope

    def modules(self, family: str, name: str) -> ModuleTarget:
        """The files answering to module ``name`` of ``family`` (none: external)."""
        paths = tuple(sorted(self.by_module.get((family, name), ())))
        return ModuleTarget(name, paths)

    def symbol_in(self, paths: tuple[str, ...] | list[str], name: str) -> SymbolTarget | None:
        """The first top-level symbol called ``name`` in ``paths``."""
        for candidate in paths:
            symbol = self.top_level.get(candidate, {}).get(name)
            if symbol is not None:
                return SymbolTarget(candidate, symbol.qualname)
        return None

    def siblings(self, path: str) -> list[str]:
        """Files that share a namespace with ``path`` without imports."""
        extract = self.files[path]
        system = module_system_for(extract.language)
        return system.siblings(self, path, extract) if system is not None else []


def _top_level(extract: FileExtract) -> dict[str, SymbolDef]:
    return {s.name: s for s in extract.symbols if s.parent is None}

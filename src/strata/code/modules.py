"""Module names, packages and import bindings: how files see each other.

For each language family this decides which module name a file answers to,
which manifest (package) it belongs to, and what each import of a file binds
(a symbol, a module of the repository, or something external). Pure: it works
on parsed files and the tree listing only.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

from strata.code.model import FileExtract, Import, SymbolDef

Family = Literal["python", "js", "go", "java", "rust", "csharp"]

FAMILY: dict[str, Family] = {
    "python": "python",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "go": "go",
    "java": "java",
    "rust": "rust",
    "csharp": "csharp",
}

JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")

MANIFESTS: dict[str, str] = {
    "pyproject.toml": "python",
    "setup.py": "python",
    "package.json": "npm",
    "go.mod": "go",
    "Cargo.toml": "cargo",
    "pom.xml": "maven",
    "build.gradle": "gradle",
    "build.gradle.kts": "gradle",
}


@dataclass(frozen=True, slots=True)
class PackageInfo:
    """A package detected from a manifest file: its directory ('' = repo root)."""

    path: str
    name: str
    ecosystem: str
    manifest: str


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


def detect_packages(paths: list[str], manifests: dict[str, bytes]) -> list[PackageInfo]:
    """Packages from manifest files in the tree (``manifests``: path -> content)."""
    found: dict[str, PackageInfo] = {}
    for path in paths:
        base = posixpath.basename(path)
        ecosystem = MANIFESTS.get(base) or ("dotnet" if base.endswith(".csproj") else None)
        if ecosystem is None:
            continue
        directory = posixpath.dirname(path)
        if directory in found and found[directory].ecosystem == ecosystem:
            continue
        name = _manifest_name(base, manifests.get(path, b"")) or (
            base[: -len(".csproj")] if base.endswith(".csproj") else posixpath.basename(directory)
        )
        found.setdefault(directory, PackageInfo(directory, name or "(root)", ecosystem, path))
    return sorted(found.values(), key=lambda p: p.path)


_NAME_PATTERNS: dict[str, re.Pattern[bytes]] = {
    "pyproject.toml": re.compile(rb'^\s*name\s*=\s*["\']([^"\']+)["\']', re.M),
    "setup.py": re.compile(rb'name\s*=\s*["\']([^"\']+)["\']'),
    "package.json": re.compile(rb'"name"\s*:\s*"([^"]+)"'),
    "go.mod": re.compile(rb"^module\s+(\S+)", re.M),
    "Cargo.toml": re.compile(rb'^\s*name\s*=\s*"([^"]+)"', re.M),
    "pom.xml": re.compile(rb"<artifactId>([^<]+)</artifactId>"),
}


def _manifest_name(base: str, content: bytes) -> str | None:
    pattern = _NAME_PATTERNS.get(base)
    if pattern is None:
        return None
    match = pattern.search(content[:20000])
    return match.group(1).decode(errors="replace").strip() if match else None


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

    def __init__(self, files: dict[str, FileExtract], packages: list[PackageInfo]) -> None:
        self.files = files
        self.packages = packages
        self.by_module: dict[tuple[Family, str], list[str]] = defaultdict(list)
        self.module_of: dict[str, str] = {}
        self.top_level: dict[str, dict[str, SymbolDef]] = {}
        self.go_modules = [p for p in packages if p.ecosystem == "go"]
        self.by_dir: dict[str, list[str]] = defaultdict(list)
        for path, extract in files.items():
            self.by_dir[posixpath.dirname(path)].append(path)
            self.top_level[path] = {s.name: s for s in extract.symbols if s.parent is None}
            family = FAMILY.get(extract.language)
            if family is None:
                continue
            names = self._module_names(family, path, extract)
            if names:
                self.module_of[path] = names[0]
            for name in names:
                self.by_module[(family, name)].append(path)

    # -- module naming ---------------------------------------------------------------

    def module_names(self, family: Family, path: str, extract: FileExtract) -> list[str]:
        """The names a file answers to (also for a file no longer in the index)."""
        return self._module_names(family, path, extract)

    def _module_names(self, family: Family, path: str, extract: FileExtract) -> list[str]:
        """The names a file answers to; the first is the one shown to people."""
        if family == "python":
            return _python_names(path)
        if family == "js":
            return _js_names(path)
        if family == "go":
            return self._go_names(path)
        if family == "java":
            classes = [s.name for s in extract.symbols if s.parent is None]
            package = extract.package or ""
            return [f"{package}.{c}" if package else c for c in classes] + (
                [package] if package else []
            )
        if family == "rust":
            return [_rust_module(path)]
        return [extract.package or ""]  # C#: the namespace

    def _go_names(self, path: str) -> list[str]:
        """Import paths of the file's directory under each go.mod, then the directory."""
        directory = posixpath.dirname(path)
        names = []
        for module in self.go_modules:
            prefix = module.path + "/" if module.path else ""
            if directory == module.path or directory.startswith(prefix):
                rel = directory[len(module.path) :].lstrip("/")
                names.append(f"{module.name}/{rel}" if rel else module.name)
        names.append(directory)
        return names

    # -- import resolution -----------------------------------------------------------

    def scope(self, path: str) -> FileScope:
        """What each import of the file binds."""
        extract = self.files[path]
        family = FAMILY.get(extract.language)
        scope = FileScope()
        if family is None:
            return scope
        for imp in extract.imports:
            bound = self._bind(family, path, extract, imp, scope)
            scope.imports.append((imp, bound))
        return scope

    def _modules(self, family: Family, name: str) -> ModuleTarget:
        paths = tuple(sorted(self.by_module.get((family, name), ())))
        return ModuleTarget(name, paths)

    def _bind(
        self, family: Family, path: str, extract: FileExtract, imp: Import, scope: FileScope
    ) -> list[Binding]:
        if family == "python":
            return self._bind_python(path, imp, scope)
        if family == "js":
            return self._bind_js(path, imp, scope)
        if family == "go":
            target = self._modules("go", imp.module)
            alias = imp.alias or imp.module.rsplit("/", 1)[-1]
            if alias in ("_",):
                return [target]
            if alias == ".":
                scope.wildcards.append(target)
            else:
                scope.bindings[alias] = target
            return [target]
        if family == "java":
            return self._bind_java(imp, scope)
        if family == "rust":
            return self._bind_rust(path, imp, scope)
        return self._bind_csharp(imp, scope)

    def _bind_python(self, path: str, imp: Import, scope: FileScope) -> list[Binding]:
        module = imp.module
        if module.startswith("."):
            module = _python_relative(path, module)
        if not imp.names:
            target = self._modules("python", module)
            if imp.alias:
                scope.bindings[imp.alias] = target
            else:
                # `import a.b.c` binds `a`, and the dotted receiver `a.b.c` resolves whole.
                scope.bindings[module] = target
                head = module.split(".", 1)[0]
                scope.bindings.setdefault(head, self._modules("python", head))
            return [target]
        base = self._modules("python", module)
        bound: list[Binding] = []
        for name in imp.names:
            if name == "*":
                scope.wildcards.append(base)
                bound.append(base)
                continue
            sub = self._modules("python", f"{module}.{name}")
            binding: Binding
            if sub.paths:
                binding = sub
            else:
                found = self._symbol_in(base.paths, name)
                if found is not None:
                    binding = found
                elif base.paths:
                    binding = ModuleTarget(module, base.paths)
                else:
                    binding = ModuleTarget(f"{module}.{name}", ())
            scope.bindings[imp.alias or name] = binding
            bound.append(binding)
        return bound

    def _bind_js(self, path: str, imp: Import, scope: FileScope) -> list[Binding]:
        spec = imp.module
        if spec.startswith("."):
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
            target = self._modules("js", joined)
        else:
            target = ModuleTarget(spec, ())
        if not imp.names:
            if imp.alias:
                scope.bindings[imp.alias] = target
            return [target]
        bound: list[Binding] = []
        for name in imp.names:
            if name == "*":
                if imp.alias:
                    scope.bindings[imp.alias] = target
                else:
                    scope.wildcards.append(target)
                bound.append(target)
                continue
            if name == "default":
                found = self._default_export(target.paths, imp.alias)
            else:
                found = self._symbol_in(target.paths, name)
            binding: Binding = found or target
            scope.bindings[imp.alias or name] = binding
            bound.append(binding)
        return bound

    def _bind_java(self, imp: Import, scope: FileScope) -> list[Binding]:
        module = imp.module
        if module.endswith(".*"):
            target = self._modules("java", module[:-2])
            scope.wildcards.append(target)
            return [target]
        cls = module.rpartition(".")[2]
        paths = self.by_module.get(("java", module), [])
        found = self._symbol_in(tuple(paths), cls) if paths else None
        binding: Binding = found or ModuleTarget(module, ())
        scope.bindings[imp.alias or cls] = binding
        return [binding]

    def _bind_rust(self, path: str, imp: Import, scope: FileScope) -> list[Binding]:
        module = _rust_absolute(path, imp.module)
        target = self._modules("rust", module)
        if not imp.names:
            name = imp.alias or module.rsplit("::", 1)[-1]
            if target.paths:
                scope.bindings[name] = target
                return [target]
            parent, _, last = module.rpartition("::")
            found = self._symbol_in(self._modules("rust", parent).paths, last)
            binding: Binding = found or target
            scope.bindings[name] = binding
            return [binding]
        bound: list[Binding] = []
        for name in imp.names:
            if name == "*":
                scope.wildcards.append(target)
                bound.append(target)
                continue
            sub = self._modules("rust", f"{module}::{name}")
            inner: Binding | None = sub if sub.paths else self._symbol_in(target.paths, name)
            binding = inner or ModuleTarget(f"{module}::{name}", ())
            scope.bindings[imp.alias or name] = binding
            bound.append(binding)
        return bound

    def _bind_csharp(self, imp: Import, scope: FileScope) -> list[Binding]:
        if imp.alias:
            namespace, _, name = imp.module.rpartition(".")
            found = self._symbol_in(self._modules("csharp", namespace).paths, name)
            binding: Binding = found or self._modules("csharp", imp.module)
            scope.bindings[imp.alias] = binding
            return [binding]
        target = self._modules("csharp", imp.module)
        scope.wildcards.append(target)
        return [target]

    def _symbol_in(self, paths: tuple[str, ...] | list[str], name: str) -> SymbolTarget | None:
        for candidate in paths:
            symbol = self.top_level.get(candidate, {}).get(name)
            if symbol is not None:
                return SymbolTarget(candidate, symbol.qualname)
        return None

    def _default_export(self, paths: tuple[str, ...], alias: str | None) -> SymbolTarget | None:
        for candidate in paths:
            tops = self.top_level.get(candidate, {})
            if alias and alias in tops:
                return SymbolTarget(candidate, tops[alias].qualname)
            callables = [s for s in tops.values() if s.kind in ("function", "class")]
            if len(callables) == 1:
                return SymbolTarget(candidate, callables[0].qualname)
        return None

    def siblings(self, path: str) -> list[str]:
        """Files that share a namespace with ``path`` without imports.

        Go: the same directory; Java: the same package; C#: the same namespace.
        """
        extract = self.files[path]
        family = FAMILY.get(extract.language)
        if family == "go":
            return [p for p in self.by_dir[posixpath.dirname(path)] if p != path]
        if family in ("java", "csharp") and extract.package:
            return [p for p in self.by_module.get((family, extract.package), []) if p != path]
        return []


def _python_names(path: str) -> list[str]:
    """Every dotted suffix of the path; in a src/ layout, the part after src/ first."""
    parts = posixpath.splitext(path)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    names = [".".join(parts[i:]) for i in range(len(parts)) if parts[i:]]
    if "src" in parts[:-1]:
        cut = len(parts) - 1 - parts[::-1].index("src")
        primary = ".".join(parts[cut + 1 :])
        names.remove(primary)
        names.insert(0, primary)
    return names


def _js_names(path: str) -> list[str]:
    """The path without its extension; an index file also answers to its folder."""
    stem = posixpath.splitext(path)[0]
    for ext in JS_EXTENSIONS:
        if path.endswith(ext):
            stem = path[: -len(ext)]
            break
    names = [stem]
    if posixpath.basename(stem) == "index":
        names.append(posixpath.dirname(stem))
    return names


def _python_relative(path: str, module: str) -> str:
    dots = len(module) - len(module.lstrip("."))
    rest = module[dots:]
    parts = posixpath.dirname(path).split("/") if posixpath.dirname(path) else []
    if dots > 1:
        parts = parts[: len(parts) - (dots - 1)] if dots - 1 <= len(parts) else []
    base = ".".join(p for p in parts if p)
    return f"{base}.{rest}".strip(".") if rest else base


def _rust_module(path: str) -> str:
    parts = path.split("/")
    if "src" in parts:
        parts = parts[parts.index("src") + 1 :]
    stem = posixpath.splitext(parts[-1])[0] if parts else ""
    parts = parts[:-1]
    if stem not in ("lib", "main", "mod"):
        parts.append(stem)
    return "::".join(["crate", *parts])


def _rust_absolute(path: str, module: str) -> str:
    """``self::`` and ``super::`` paths made absolute (``crate::...``)."""
    current = _rust_module(path)
    if module.startswith("self::"):
        return current + module[len("self") :]
    if module.startswith("super::"):
        parent = current.rsplit("::", 1)[0] if "::" in current else current
        return parent + module[len("super") :]
    return module

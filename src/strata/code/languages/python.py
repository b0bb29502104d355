"""Python: classes, functions, methods, UPPER_CASE module constants, type aliases;
pytest/unittest tests; FastAPI/Flask routes, Django ``urls.py``, typer/click
commands and ``if __name__ == "__main__":``."""

from __future__ import annotations

import functools
import posixpath
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import tree_sitter_python
from tree_sitter import Node

from strata.code.flow import imports as absolute
from strata.code.flow import python as flow
from strata.code.languages import _routes
from strata.code.languages._overloads import fold_overloads, python_stub
from strata.code.languages.base import (
    Decl,
    LanguageAdapter,
    Unit,
    clean_doc,
    collapse,
    signature,
    unquote,
)
from strata.code.languages.module_system import (
    Binding,
    FileScope,
    Manifest,
    ModuleSystem,
    ModuleTarget,
    SymbolTarget,
)
from strata.code.model import FileExtract, Import, SymbolDef, SymbolKind

if TYPE_CHECKING:
    from strata.code.modules import ModuleIndex

_TEST_NAME = re.compile(r"^test")
_ROUTE_METHODS = frozenset({"get", "post", "put", "delete", "patch", "head", "options"})
MAX_REEXPORT_HOPS = 4  # `from .a import x` chains followed from an importing file
_CLI_FRAMEWORKS = ("typer", "click")


@dataclass(slots=True)
class _Derived:
    """What the module system derived from one module index (computed on first use)."""

    packages: frozenset[str] | None = None
    reexports: dict[tuple[tuple[str, ...], str, int], tuple[SymbolTarget | None, list[str]]] = (
        field(default_factory=dict)
    )


class PythonModules(ModuleSystem):
    """Dotted module paths (every suffix of the file path), ``import`` and ``from``."""

    family = "python"
    manifests = (
        Manifest(
            "pyproject.toml", "python", re.compile(rb'^\s*name\s*=\s*["\']([^"\']+)["\']', re.M)
        ),
        Manifest("setup.py", "python", re.compile(rb'name\s*=\s*["\']([^"\']+)["\']')),
    )

    def module_names(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        return list(_module_names(path))

    def __init__(self) -> None:
        # Per module index: the directories that are packages (for absolute imports) and
        # the re-exports already followed (a pure function of the index's files).
        self._derived: weakref.WeakKeyDictionary[ModuleIndex, _Derived] = (
            weakref.WeakKeyDictionary()
        )
        self._last: tuple[weakref.ref[ModuleIndex], _Derived] | None = None

    def bind(
        self, index: ModuleIndex, path: str, extract: FileExtract, imp: Import, scope: FileScope
    ) -> list[Binding]:
        function = _enclosing_function(extract, imp.line)
        if function is None:
            return self._bind(index, path, imp, scope)
        # `from .testing import X as cls` in a function binds cls there only.
        local = FileScope()
        bound = self._bind(index, path, imp, local)
        for name, binding in local.bindings.items():
            scope.bindings[absolute.scoped(function, name)] = binding
        return bound

    def _bind(
        self, index: ModuleIndex, path: str, imp: Import, scope: FileScope, depth: int = 0
    ) -> list[Binding]:
        module = imp.module
        relative = module.startswith(".")
        if relative:
            module = _relative(path, module)

        def reach(name: str) -> ModuleTarget:
            # Python 3 imports are absolute: `import json` in a package with its own
            # `json` subpackage is the standard library, not the subpackage.
            target = self.modules(index, name)
            if relative or not target.paths:
                return target
            paths = absolute.absolute_paths(name, target.paths, self._package_dirs(index))
            return target if paths == target.paths else ModuleTarget(name, paths)

        if not imp.names:
            target = reach(module)
            if imp.alias:
                scope.bindings[imp.alias] = target
            else:
                # `import a.b.c` binds `a`, and the dotted receiver `a.b.c` resolves whole.
                scope.bindings[module] = target
                head = module.split(".", 1)[0]
                scope.bindings.setdefault(head, reach(head))
            return [target]
        base = reach(module)
        bound: list[Binding] = []
        for name in imp.names:
            if name == "*":
                scope.wildcards.append(base)
                bound.append(base)
                continue
            sub = reach(f"{module}.{name}")
            binding: Binding
            if sub.paths:
                binding = sub
            else:
                via: list[str] = []
                found = index.symbol_in(base.paths, name) or self._reexport(
                    index, base.paths, name, depth, via
                )
                if found is not None:
                    binding = found
                    # The re-exporting files count as imported too: a change to their
                    # re-exports changes what this import binds (incremental indexing).
                    bound.extend(ModuleTarget(module, (p,)) for p in via)
                elif base.paths:
                    binding = ModuleTarget(module, base.paths)
                else:
                    binding = ModuleTarget(f"{module}.{name}", ())
            scope.bindings[imp.alias or name] = binding
            bound.append(binding)
        return bound

    def _reexport(
        self, index: ModuleIndex, paths: tuple[str, ...], name: str, depth: int, via: list[str]
    ) -> SymbolTarget | None:
        """The declaration a module re-exports as ``name``: ``from .api import get``
        (also ``as get``) or ``from .api import *`` at the top of its file, followed
        through further re-exports (a few hops: cycles in broken code end there).

        Remembered per index: every file importing a name from a package asks the
        same question (a Django profile spent 8 s of 11 answering it again)."""
        if depth >= MAX_REEXPORT_HOPS:
            return None
        memo = self._of(index).reexports
        key = (paths, name, depth)
        hit = memo.get(key)
        if hit is None:
            through: list[str] = []
            hit = memo[key] = (self._find_reexport(index, paths, name, depth, through), through)
        via.extend(hit[1])
        return hit[0]

    def _find_reexport(
        self, index: ModuleIndex, paths: tuple[str, ...], name: str, depth: int, via: list[str]
    ) -> SymbolTarget | None:
        for path in paths:
            extract = index.files.get(path)
            if extract is None or extract.language != "python":
                continue
            for imp in extract.imports:
                if not imp.names or _enclosing_function(extract, imp.line) is not None:
                    continue
                wildcard = "*" in imp.names
                if not wildcard and (imp.alias or imp.names[0]) != name:
                    continue
                probe = Import(imp.module, imp.line, names=(name,)) if wildcard else imp
                scope = FileScope()
                hops = self._bind(index, path, probe, scope, depth + 1)
                found = scope.bindings.get(name)
                if isinstance(found, SymbolTarget):
                    via.append(path)
                    for hop in hops:  # the files further along the chain
                        via.extend(hop.paths if isinstance(hop, ModuleTarget) else ())
                    return found
        return None

    def _package_dirs(self, index: ModuleIndex) -> frozenset[str]:
        derived = self._of(index)
        if derived.packages is None:
            derived.packages = absolute.package_dirs(index.files)
        return derived.packages

    def _of(self, index: ModuleIndex) -> _Derived:
        # Asked on every import reached: the last index answers without building a weak
        # reference per call (WeakKeyDictionary.get showed seconds in a Django profile).
        last = self._last
        if last is not None and last[0]() is index:
            return last[1]
        found = self._derived.get(index)
        if found is None:
            found = self._derived[index] = _Derived()
        self._last = (weakref.ref(index), found)
        return found

    def submodule(
        self, index: ModuleIndex, module: ModuleTarget, rest: list[str]
    ) -> ModuleTarget | None:
        name = ".".join([module.name, *rest])
        target = index.by_module.get((self.family, name))
        return ModuleTarget(name, tuple(sorted(target))) if target else None

    def qualified_name(
        self, module: str | None, extract: FileExtract, symbol: SymbolDef
    ) -> str | None:
        return f"{module}.{symbol.qualname}" if module else None


class PythonAdapter(LanguageAdapter):
    language = "python"
    extensions = (".py", ".pyi")
    query_file = "python"
    module_system = PythonModules()
    framework_imports = (
        ("fastapi", "fastapi"),
        ("flask", "flask"),
        ("django", "django"),
        ("pytest", "pytest"),
        ("unittest", "unittest"),
        ("typer", "typer"),
        ("click", "click"),
    )

    def grammar(self) -> object:
        return tree_sitter_python.language()

    def is_test_path(self, path: str) -> bool:
        name = posixpath.basename(path)
        return name == "conftest.py" or _is_pytest_file(name)

    def normalize_receiver(self, text: str) -> str:
        # super() and super(Cls, self) both mean the parent class
        return "super" if text.startswith("super(") else text

    def on_definition(
        self, unit: Unit, kind: SymbolKind, node: Node, name: Node, caps: dict[str, list[Node]]
    ) -> Decl | None:
        decl = Decl(name=unit.text(name), kind=kind, node=node)
        parent = node.parent
        if parent is not None and parent.type == "decorated_definition":
            decl.outer = parent
            decl.decorator_nodes = [c for c in parent.named_children if c.type == "decorator"]
            decl.decorators = [collapse(unit.text(d))[1:].strip() for d in decl.decorator_nodes]
        return decl

    def describe(self, unit: Unit, decl: Decl) -> None:
        node = decl.node
        body = node.child_by_field_name("body")
        if body is None:  # constants and type aliases: the whole statement
            decl.signature = signature(unit, node.start_byte, node.end_byte)
            return
        decl.signature = signature(unit, node.start_byte, body.start_byte)
        decl.docstring = _docstring(unit, body)
        if decl.kind == "class":
            supers = node.child_by_field_name("superclasses")
            if supers is not None:
                decl.bases = [
                    collapse(unit.text(arg))
                    for arg in supers.named_children
                    if arg.type not in ("keyword_argument", "comment", "dictionary_splat")
                ]

    def on_entrypoint(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        unit.add_entrypoint("__main__")

    def before_link(self, unit: Unit) -> None:
        fold_overloads(unit, python_stub)  # `@overload` stubs are their implementation

    def finish(self, unit: Unit) -> None:
        _mark_tests(unit, pytest_file=_is_pytest_file(posixpath.basename(unit.path)))
        _mark_routes(unit)
        _mark_cli(unit)
        if posixpath.basename(unit.path) == "urls.py":
            _mark_django_urls(unit)
        flow.collect(unit, self.ts_language())

    def extract(self, path: str, source: bytes) -> flow.FileExtract:
        return flow.attach(super().extract(path, source))  # the flow `finish` collected


def _is_pytest_file(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _docstring(unit: Unit, body: Node) -> str | None:
    first = body.named_child(0) if body.named_child_count else None
    if first is None or first.type != "expression_statement" or first.named_child_count != 1:
        return None
    string = first.named_child(0)
    if string.type != "string":
        return None
    parts = [c for c in string.named_children if c.type == "string_content"]
    if not parts:
        return None
    text = unit.source[parts[0].start_byte : parts[-1].end_byte]
    return clean_doc(text.decode("utf-8", errors="replace"))


def _mark_tests(unit: Unit, *, pytest_file: bool) -> None:
    symbols = unit.symbols()
    unittest_classes = {
        d.qualname
        for d in symbols
        if d.kind == "class" and any(b.rsplit(".", 1)[-1].endswith("TestCase") for b in d.bases)
    }
    changed = True
    while changed:  # subclasses of a TestCase subclass declared in this file
        changed = False
        for d in symbols:
            if (
                d.kind == "class"
                and d.qualname not in unittest_classes
                and any(b in unittest_classes for b in d.bases)
            ):
                unittest_classes.add(d.qualname)
                changed = True
    for d in symbols:
        if d.kind not in ("function", "method") or not _TEST_NAME.match(d.name):
            continue
        enclosing = d.enclosing
        if enclosing is not None and enclosing.qualname in unittest_classes:
            d.test_framework = "unittest"
        elif pytest_file and (
            enclosing is None or (enclosing.kind == "class" and _is_test_class_chain(enclosing))
        ):
            d.test_framework = "pytest"


def _is_test_class_chain(decl: Decl) -> bool:
    """A pytest test class: ``Test*`` classes, possibly nested in other ``Test*`` classes."""
    current: Decl | None = decl
    while current is not None:
        if current.kind != "class" or not current.name.startswith("Test"):
            return False
        current = current.enclosing
    return True


def _call_parts(unit: Unit, call: Node) -> tuple[str | None, str, list[Node], dict[str, Node]]:
    """(receiver text, called name, positional args, keyword args) of a call node."""
    function = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    receiver: str | None = None
    name = ""
    if function is not None and function.type == "attribute":
        obj = function.child_by_field_name("object")
        attr = function.child_by_field_name("attribute")
        receiver = collapse(unit.text(obj)) if obj is not None else None
        name = unit.text(attr) if attr is not None else ""
    elif function is not None:
        name = unit.text(function)
    positional: list[Node] = []
    keywords: dict[str, Node] = {}
    if args is not None and args.type == "argument_list":
        for arg in args.named_children:
            if arg.type == "keyword_argument":
                key, value = arg.child_by_field_name("name"), arg.child_by_field_name("value")
                if key is not None and value is not None:
                    keywords[unit.text(key)] = value
            elif arg.type != "comment":
                positional.append(arg)
    return receiver, name, positional, keywords


def _string(unit: Unit, node: Node | None) -> str | None:
    if node is None or node.type != "string":
        return None
    return unquote(unit.text(node))


def _strings(unit: Unit, node: Node | None) -> list[str]:
    if node is None or node.type not in ("list", "tuple", "set"):
        return []
    return [s for s in (_string(unit, c) for c in node.named_children) if s is not None]


def _router_prefixes(unit: Unit) -> dict[str, str]:
    """``router = APIRouter(prefix="/x")`` / ``bp = Blueprint(..., url_prefix="/x")``."""
    prefixes: dict[str, str] = {}
    for call in unit.calls:
        if call.caller is not None or call.name not in ("APIRouter", "Blueprint"):
            continue
        assignment = call.node.parent
        if assignment is None or assignment.type != "assignment":
            continue
        target = assignment.child_by_field_name("left")
        _, _, _, keywords = _call_parts(unit, call.node)
        prefix = _string(unit, keywords.get("prefix") or keywords.get("url_prefix"))
        if target is not None and target.type == "identifier" and prefix:
            prefixes[unit.text(target)] = prefix
    return prefixes


def _mark_routes(unit: Unit) -> None:
    framework = "fastapi" if "fastapi" in unit.frameworks else None
    framework = framework or ("flask" if "flask" in unit.frameworks else None)
    if framework is None:
        return
    prefixes = _router_prefixes(unit)
    for d in unit.symbols():
        for deco in d.decorator_nodes:
            call = deco.named_child(0) if deco.named_child_count else None
            if call is None or call.type != "call":
                continue
            receiver, name, positional, keywords = _call_parts(unit, call)
            path = _string(unit, positional[0] if positional else keywords.get("path"))
            if receiver is None or path is None:
                continue
            if name in _ROUTE_METHODS:
                methods = [name]
            elif name in ("route", "api_route"):
                methods = _strings(unit, keywords.get("methods")) or (
                    ["GET"] if name == "route" else ["ANY"]
                )
            else:
                continue
            d.entrypoint = _routes.http(methods, prefixes.get(receiver, ""), path)
            d.framework = framework
            break


def _mark_cli(unit: Unit) -> None:
    framework = next((f for f in _CLI_FRAMEWORKS if f in unit.frameworks), None)
    if framework is None:
        return
    for d in unit.symbols():
        for deco in d.decorator_nodes:
            target = deco.named_child(0) if deco.named_child_count else None
            if target is None:
                continue
            call = target if target.type == "call" else None
            function = call.child_by_field_name("function") if call is not None else target
            if function is None or function.type != "attribute":
                continue
            attr = function.child_by_field_name("attribute")
            if attr is None or unit.text(attr) not in ("command", "group"):
                continue
            name = d.name.replace("_", "-")
            if call is not None:
                _, _, positional, keywords = _call_parts(unit, call)
                given = _string(unit, positional[0] if positional else keywords.get("name"))
                name = given or name
            d.entrypoint = f"cli {name}"
            d.framework = framework
            break


def _mark_django_urls(unit: Unit) -> None:
    """``path("users/", view)`` in urls.py: file-level entrypoints (views live elsewhere)."""
    for call in unit.calls:
        if call.receiver is not None or call.name not in ("path", "re_path"):
            continue
        _, _, positional, keywords = _call_parts(unit, call.node)
        route = _string(unit, positional[0] if positional else keywords.get("route"))
        view = positional[1] if len(positional) > 1 else keywords.get("view")
        if route is None or view is None:
            continue
        if view.type == "call" and _call_parts(unit, view)[1] == "include":
            continue
        unit.add_entrypoint(_routes.http(["ANY"], route), "django")


@functools.lru_cache(maxsize=1 << 16)
def _module_names(path: str) -> tuple[str, ...]:
    """Every dotted suffix of the path; in a src/ layout, the part after src/ first
    (memoised: every run's module index asks it for every file)."""
    parts = posixpath.splitext(path)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    names = [".".join(parts[i:]) for i in range(len(parts)) if parts[i:]]
    if "src" in parts[:-1]:
        cut = len(parts) - 1 - parts[::-1].index("src")
        primary = ".".join(parts[cut + 1 :])
        names.remove(primary)
        names.insert(0, primary)
    return tuple(names)


def _enclosing_function(extract: FileExtract, line: int) -> str | None:
    # getattr: extracts cached before a field existed lack it
    local_imports: tuple[tuple[int, str], ...] = getattr(
        getattr(extract, "flow", None), "local_imports", ()
    )
    for at, function in local_imports:
        if at == line:
            return function
    return None


def _relative(path: str, module: str) -> str:
    """``from ..a import b`` made absolute against the file's directory."""
    dots = len(module) - len(module.lstrip("."))
    rest = module[dots:]
    parts = posixpath.dirname(path).split("/") if posixpath.dirname(path) else []
    if dots > 1:
        parts = parts[: len(parts) - (dots - 1)] if dots - 1 <= len(parts) else []
    base = ".".join(p for p in parts if p)
    return f"{base}.{rest}".strip(".") if rest else base

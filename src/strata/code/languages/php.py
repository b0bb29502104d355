"""PHP: classes, interfaces, traits, enums, functions, methods and constants;
``use`` imports (groups flattened) and ``require``/``include`` of files;
PHPUnit tests; Laravel ``Route::<method>`` and Symfony ``#[Route]`` routes;
``index.php`` front controllers. Namespaces are the module system: a class
answers to its fully qualified name (``App\\Models\\Cart``)."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

import tree_sitter_php
from tree_sitter import Node

from strata.code.languages import _routes
from strata.code.languages.base import (
    Decl,
    LanguageAdapter,
    Unit,
    clean_doc,
    collapse,
    doc_comments_above,
    signature,
    strip_block_comment,
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

_COMMENTS = frozenset({"comment"})
_TEST_FILE = re.compile(r"^\w+Test\.php$")
_LARAVEL_METHODS = frozenset({"get", "post", "put", "patch", "delete", "options", "any", "match"})
_STRINGS = frozenset({"string", "encapsed_string"})
_FIRST_STRING = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""")
_METHODS_ARGUMENT = re.compile(r"methods\s*:\s*\[([^\]]*)\]")
_INCLUDES = frozenset(
    {
        "include_expression",
        "include_once_expression",
        "require_expression",
        "require_once_expression",
    }
)
_FRONT_CONTROLLER = "front controller"


class PhpModules(ModuleSystem):
    """Namespaces: a file answers to ``Namespace\\Name`` for each top-level
    declaration and to its namespace; ``use A\\B\\C`` binds ``C``; files of one
    namespace see each other; a name written ``\\A\\B\\C`` is found without an
    import; an included file's declarations are all visible. A method must say
    ``$this``/``self::`` to reach its class."""

    family = "php"
    manifests = (Manifest("composer.json", "composer", re.compile(rb'"name"\s*:\s*"([^"]+)"')),)

    def module_names(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        namespace = extract.package or ""
        tops = [s.name for s in extract.symbols if s.parent is None]
        return [f"{namespace}\\{t}" if namespace else t for t in tops] + (
            [namespace] if namespace else []
        )

    def bind(
        self, index: ModuleIndex, path: str, extract: FileExtract, imp: Import, scope: FileScope
    ) -> list[Binding]:
        if _is_file(imp.module):
            target = _included(index, path, imp.module)
            scope.wildcards.append(target)
            return [target]
        last = imp.module.rpartition("\\")[2]
        paths = index.by_module.get((self.family, imp.module), [])
        found = index.symbol_in(paths, last) if paths else None
        binding: Binding = found or self.modules(index, imp.module)
        scope.bindings[imp.alias or last] = binding
        return [binding]

    def siblings(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        return self.package_siblings(index, path, extract)

    def absolute(self, index: ModuleIndex, name: str) -> SymbolTarget | None:
        if not name.startswith("\\"):
            return None
        qualified = name[1:]
        paths = index.by_module.get((self.family, qualified), [])
        return index.symbol_in(paths, qualified.rpartition("\\")[2]) if paths else None

    def qualified_name(
        self, module: str | None, extract: FileExtract, symbol: SymbolDef
    ) -> str | None:
        if not extract.package:
            return None
        return f"{extract.package}\\{symbol.qualname.replace('.', '::')}"


def _is_file(module: str) -> bool:
    # namespace names never contain a slash or a dot; included paths do
    return "/" in module or module.endswith(".php")


def _included(index: ModuleIndex, path: str, written: str) -> ModuleTarget:
    """The repository file an include reaches: relative to the including file
    (``__DIR__ . '/x.php'`` is written ``./x.php``), else to the repository root."""
    directory = posixpath.dirname(path)
    candidates = [posixpath.normpath(posixpath.join(directory, written))]
    if not written.startswith("."):
        candidates.append(posixpath.normpath(written.lstrip("/")))
    for candidate in candidates:
        if candidate in index.files:
            return ModuleTarget(candidate, (candidate,))
    return ModuleTarget(written, ())


class PhpAdapter(LanguageAdapter):
    language = "php"
    extensions = (".php",)
    query_file = "php"
    module_system = PhpModules()
    framework_imports = (
        ("PHPUnit", "phpunit"),
        ("Illuminate", "laravel"),
        ("Symfony", "symfony"),
    )
    # `parent::m()` is the parent class; `self::`/`static::` are the class itself
    super_receivers = frozenset({"parent"})

    def grammar(self) -> object:
        return tree_sitter_php.language_php()

    def is_test_path(self, path: str) -> bool:
        return "tests" in path.split("/")[:-1] or bool(_TEST_FILE.match(posixpath.basename(path)))

    def framework_of_import(self, module: str) -> str | None:
        return super().framework_of_import(module.replace("\\", "."))

    def normalize_receiver(self, text: str) -> str:
        if text in ("self", "static"):
            return "self"
        if text == "$this" or text.startswith(("$this->", "$this?->")):
            return "this" + text[len("$this") :].replace("?->", ".").replace("->", ".")
        return super().normalize_receiver(text)

    def on_definition(
        self, unit: Unit, kind: SymbolKind, node: Node, name: Node, caps: dict[str, list[Node]]
    ) -> Decl | None:
        decl = Decl(name=unit.text(name), kind=kind, node=node)
        holder = node.parent
        # `const A = 1;` alone: the symbol's text starts at the declaration (modifiers too)
        if (
            kind == "constant"
            and holder is not None
            and sum(1 for c in holder.named_children if c.type == "const_element") == 1
        ):
            decl.outer = holder
        return decl

    def describe(self, unit: Unit, decl: Decl) -> None:
        node = decl.node
        if decl.kind == "constant":
            holder = decl.outer if decl.outer is not None else node
            decl.signature = signature(unit, holder.start_byte, holder.end_byte)
            docs = doc_comments_above(holder, _is_doc, _COMMENTS)
        else:
            attributes = node.child_by_field_name("attributes")
            cut = [attributes] if attributes is not None else []
            decl.decorator_nodes = cut
            decl.decorators = _attributes(unit, attributes)
            body = node.child_by_field_name("body")
            stop = body.start_byte if body is not None else node.end_byte
            decl.signature = signature(unit, node.start_byte, stop, cut)
            docs = doc_comments_above(node, _is_doc, _COMMENTS)
        if docs:
            decl.docstring = clean_doc(strip_block_comment(unit.text(docs[-1])))
        for child in node.named_children:
            if child.type == "base_clause":
                decl.bases = _type_names(unit, child)
            elif child.type == "class_interface_clause":
                decl.implements = _type_names(unit, child)

    def on_import_form(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        node = caps[role][0]
        line = node.start_point.row + 1
        if role == "import.include":
            written = _include_path(unit, node)
            if written is not None:
                unit.imports.append(Import(module=written, line=line))
            return
        group = node.child_by_field_name("body")
        prefix_node = next((c for c in node.named_children if c.type == "namespace_name"), None)
        prefix = unit.text(prefix_node).lstrip("\\") if group and prefix_node else ""
        for clause in (group or node).named_children:
            if clause.type != "namespace_use_clause" or not clause.named_children:
                continue
            written = unit.text(clause.named_children[0]).lstrip("\\")
            alias_node = clause.child_by_field_name("alias")
            alias = unit.text(alias_node) if alias_node is not None else None
            module = f"{prefix}\\{written}" if prefix else written
            unit.imports.append(Import(module=module, line=line, alias=alias))

    def before_link(self, unit: Unit) -> None:
        for call in unit.calls:
            if call.receiver == "Route" and call.name in _LARAVEL_METHODS:
                route = _laravel_route(unit, call.name, call.arguments)
                if route is not None:
                    unit.add_entrypoint(route, "laravel")

    def finish(self, unit: Unit) -> None:
        if posixpath.basename(unit.path) == "index.php":
            unit.add_entrypoint(_FRONT_CONTROLLER)
        test_classes: set[str] = set()
        prefixes: dict[str, str] = {}
        for d in unit.symbols():
            if d.kind == "class":
                if any(b.rsplit("\\", 1)[-1].endswith("TestCase") for b in d.bases) or (
                    unit.is_test_file and d.name.endswith("Test")
                ):
                    test_classes.add(d.qualname)
                route = _symfony_route(d.decorators)
                if route is not None:
                    prefixes[d.qualname] = route[1]
                continue
            if d.kind != "method" or d.enclosing is None:
                continue
            if d.enclosing.qualname in test_classes and (
                d.name.startswith("test")
                or "Test" in d.decorators
                or "@test" in (d.docstring or "")
            ):
                d.test_framework = "phpunit"
                unit.is_test_file = True
                continue
            route = _symfony_route(d.decorators)
            if route is not None:
                methods, path = route
                prefix = prefixes.get(d.enclosing.qualname, "")
                d.entrypoint = _routes.http(methods, prefix, path)
                d.framework = "symfony"


def _is_doc(node: Node) -> bool:
    text = node.text or b""
    return text.startswith(b"/**") and not text.startswith(b"/**/")


def _attributes(unit: Unit, attributes: Node | None) -> list[str]:
    """``#[A, B(1)]`` -> ``["A", "B(1)"]`` (every attribute of every group)."""
    if attributes is None:
        return []
    return [
        collapse(unit.text(attribute))
        for group in attributes.named_children
        for attribute in group.named_children
        if attribute.type == "attribute"
    ]


def _type_names(unit: Unit, clause: Node) -> list[str]:
    return [
        collapse(unit.text(c))
        for c in clause.named_children
        if c.type in ("name", "qualified_name")
    ]


def _include_path(unit: Unit, node: Node) -> str | None:
    """The file an include names: ``'x.php'`` as written, ``__DIR__ . '/x.php'`` as
    ``./x.php``; None for anything computed."""
    expression = node.named_children[0] if node.named_children else None
    if expression is None:
        return None
    if expression.type == "parenthesized_expression" and expression.named_children:
        expression = expression.named_children[0]
    if expression.type in _STRINGS:
        return unquote(unit.text(expression)) or None
    left = expression.child_by_field_name("left")
    right = expression.child_by_field_name("right")
    if (
        expression.type == "binary_expression"
        and left is not None
        and right is not None
        and unit.text(left) == "__DIR__"
        and right.type in _STRINGS
    ):
        return "./" + unquote(unit.text(right)).lstrip("/")
    return None


def _string_arguments(unit: Unit, arguments: Node | None) -> list[Node]:
    if arguments is None:
        return []
    return [
        a.named_children[0]
        for a in arguments.named_children
        if a.type == "argument" and a.named_children
    ]


def _laravel_route(unit: Unit, method: str, arguments: Node | None) -> str | None:
    """``Route::get('/x', ...)`` / ``Route::match(['get', 'post'], '/x', ...)``."""
    values = _string_arguments(unit, arguments)
    if method == "match":
        if len(values) < 2 or values[1].type not in _STRINGS:
            return None
        methods = [m for m, _ in _quoted(unit.text(values[0]))]
        return _routes.http(methods, unquote(unit.text(values[1])))
    if not values or values[0].type not in _STRINGS:
        return None
    return _routes.http([] if method == "any" else [method], unquote(unit.text(values[0])))


def _quoted(text: str) -> list[tuple[str, int]]:
    return [(m.group(1) or m.group(2) or "", m.start()) for m in _FIRST_STRING.finditer(text)]


def _symfony_route(decorators: list[str]) -> tuple[list[str], str] | None:
    """(methods, path) of a ``#[Route('/path', methods: ['GET'])]`` attribute."""
    for written in decorators:
        name, _, arguments = written.partition("(")
        if name.rsplit("\\", 1)[-1].strip() != "Route":
            continue
        found = _quoted(arguments)
        path = found[0][0] if found else ""
        listed = _METHODS_ARGUMENT.search(arguments)
        methods = [m for m, _ in _quoted(listed.group(1))] if listed else []
        return methods, path
    return None

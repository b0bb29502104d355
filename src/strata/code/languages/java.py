"""Java: classes, records, interfaces, annotation types, enums, methods and
constructors (overloads numbered), ``static final`` and interface constants;
JUnit/TestNG tests; Spring routes; ``static void main``."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

import tree_sitter_java
from tree_sitter import Node

from strata.code.languages import _routes
from strata.code.languages.base import (
    Decl,
    LanguageAdapter,
    Unit,
    clean_doc,
    collapse,
    doc_comments_above,
    field_signature,
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
)
from strata.code.model import FileExtract, Import, SymbolDef, SymbolKind

if TYPE_CHECKING:
    from strata.code.modules import ModuleIndex

_COMMENTS = frozenset({"block_comment", "line_comment"})
_ANNOTATIONS = frozenset({"annotation", "marker_annotation"})
_JUNIT = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"})
_MAPPINGS = {
    "GetMapping": "GET",
    "PostMapping": "POST",
    "PutMapping": "PUT",
    "DeleteMapping": "DELETE",
    "PatchMapping": "PATCH",
    "RequestMapping": None,
}
_TEST_FILE = re.compile(r"^(Test\w*|\w+(Test|Tests|IT))\.java$")


class JvmModules(ModuleSystem):
    """Packages of classes: a file answers to ``package.Class`` for each top-level
    declaration and to its package; ``import a.b.C`` and ``import a.b.*``;
    files of one package see each other; bare names in a class body reach its
    members (implicit ``this``)."""

    family = "jvm"
    manifests = (
        Manifest("pom.xml", "maven", re.compile(rb"<artifactId>([^<]+)</artifactId>")),
        Manifest("build.gradle", "gradle"),
        Manifest("build.gradle.kts", "gradle"),
    )
    class_body_is_scope = True
    overloads_by_arity = True
    bare_calls_reach_own_class = True

    def module_names(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        classes = [s.name for s in extract.symbols if s.parent is None]
        package = extract.package or ""
        return [f"{package}.{c}" if package else c for c in classes] + (
            [package] if package else []
        )

    def bind(
        self, index: ModuleIndex, path: str, extract: FileExtract, imp: Import, scope: FileScope
    ) -> list[Binding]:
        module = imp.module
        if module.endswith(".*"):
            target = self.modules(index, module[:-2])
            scope.wildcards.append(target)
            return [target]
        cls = module.rpartition(".")[2]
        paths = index.by_module.get((self.family, module), [])
        found = index.symbol_in(paths, cls) if paths else None
        binding: Binding = found or ModuleTarget(module, ())
        scope.bindings[imp.alias or cls] = binding
        return [binding]

    def siblings(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        return self.package_siblings(index, path, extract)

    def qualified_name(
        self, module: str | None, extract: FileExtract, symbol: SymbolDef
    ) -> str | None:
        return f"{extract.package}.{symbol.qualname}" if extract.package else None


class JavaAdapter(LanguageAdapter):
    language = "java"
    extensions = (".java",)
    query_file = "java"
    inferred_types = frozenset({"var"})
    module_system = JvmModules()
    framework_imports = (
        ("org.springframework", "spring"),
        ("org.junit", "junit"),
        ("junit", "junit"),
        ("org.testng", "testng"),
    )

    def grammar(self) -> object:
        return tree_sitter_java.language()

    def is_test_path(self, path: str) -> bool:
        return "src/test/" in f"/{path}" or bool(_TEST_FILE.match(posixpath.basename(path)))

    def on_definition(
        self, unit: Unit, kind: SymbolKind, node: Node, name: Node, caps: dict[str, list[Node]]
    ) -> Decl | None:
        decl = Decl(name=unit.text(name), kind=kind, node=node)
        if kind != "constant":
            return decl
        field = node.parent
        if field is None:
            return None
        if field.type == "field_declaration":
            mods = _modifiers(field)
            words = set(unit.text(mods).split()) if mods is not None else set()
            if not {"static", "final"} <= words:
                return None
        if len(field.children_by_field_name("declarator")) == 1:
            decl.outer = field
        return decl

    def describe(self, unit: Unit, decl: Decl) -> None:
        node = decl.node
        holder = node.parent if decl.kind == "constant" and node.parent is not None else node
        mods = _modifiers(holder)
        annotations = [c for c in mods.named_children if c.type in _ANNOTATIONS] if mods else []
        decl.decorator_nodes = annotations
        decl.decorators = [collapse(unit.text(a))[1:].strip() for a in annotations]
        if decl.kind == "constant":
            type_node = holder.child_by_field_name("type")
            decl.signature = field_signature(unit, holder, type_node, node, annotations)
        else:
            body = node.child_by_field_name("body")
            stop = body.start_byte if body is not None else node.end_byte
            decl.signature = signature(unit, node.start_byte, stop, annotations)
        docs = doc_comments_above(holder, _is_javadoc, _COMMENTS)
        if docs:
            decl.docstring = clean_doc(strip_block_comment(unit.text(docs[-1])))
        superclass = node.child_by_field_name("superclass")
        if superclass is not None:
            decl.bases = [collapse(unit.text(t)) for t in superclass.named_children]
        interfaces = node.child_by_field_name("interfaces")
        if interfaces is not None:
            decl.implements = _type_list(unit, interfaces)
        extends = next((c for c in node.named_children if c.type == "extends_interfaces"), None)
        if extends is not None:
            decl.bases = _type_list(unit, extends)

    def on_import_form(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        node = caps[role][0]
        path = next(
            (c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None
        )
        if path is None:
            return
        module = collapse(unit.text(path))
        if any(c.type == "asterisk" for c in node.named_children):
            module += ".*"
        unit.imports.append(Import(module=module, line=node.start_point.row + 1))

    def finish(self, unit: Unit) -> None:
        framework = "testng" if "testng" in unit.frameworks else "junit"
        prefixes: dict[str, str] = {}
        for d in unit.symbols():
            names = {_simple_name(a) for a in d.decorators}
            if d.kind == "class":
                mapping = _mapping(unit, d, "RequestMapping")
                if mapping is not None:
                    prefixes[d.qualname] = mapping[1]
                continue
            if d.kind != "method":
                continue
            if names & _JUNIT:
                d.test_framework = framework
                unit.is_test_file = True
            elif d.name == "main" and _is_static(unit, d.node):
                d.entrypoint = "static void main"
                unit.add_entrypoint("static void main")
            for annotation in _MAPPINGS:
                mapping = _mapping(unit, d, annotation)
                if mapping is not None:
                    methods, path = mapping
                    prefix = prefixes.get(d.enclosing.qualname, "") if d.enclosing else ""
                    d.entrypoint = _routes.http(methods, prefix, path)
                    d.framework = "spring"
                    break


def _modifiers(node: Node) -> Node | None:
    return next((c for c in node.named_children if c.type == "modifiers"), None)


def _is_static(unit: Unit, node: Node) -> bool:
    mods = _modifiers(node)
    return mods is not None and "static" in unit.text(mods).split()


def _is_javadoc(node: Node) -> bool:
    text = node.text or b""
    return text.startswith(b"/**") and not text.startswith(b"/**/")


def _type_list(unit: Unit, clause: Node) -> list[str]:
    types = next((c for c in clause.named_children if c.type == "type_list"), clause)
    return [collapse(unit.text(t)) for t in types.named_children]


def _simple_name(annotation: str) -> str:
    return annotation.split("(", 1)[0].rsplit(".", 1)[-1].strip()


def _mapping(unit: Unit, decl: Decl, wanted: str) -> tuple[list[str], str] | None:
    """(methods, path) of a Spring mapping annotation on ``decl``, if present."""
    for node in decl.decorator_nodes:
        name_node = node.child_by_field_name("name")
        if name_node is None or unit.text(name_node).rsplit(".", 1)[-1] != wanted:
            continue
        fixed = _MAPPINGS[wanted]
        methods: list[str] = [fixed] if fixed else []
        path = ""
        args = node.child_by_field_name("arguments")
        for arg in args.named_children if args is not None else []:
            if arg.type == "element_value_pair":
                key, value = arg.child_by_field_name("key"), arg.child_by_field_name("value")
                if key is None or value is None:
                    continue
                if unit.text(key) in ("value", "path"):
                    path = _first_string(unit, value) or path
                elif unit.text(key) == "method" and not fixed:
                    methods = re.findall(r"RequestMethod\.(\w+)", unit.text(value)) or methods
            else:
                path = _first_string(unit, arg) or path
        return methods, path
    return None


def _first_string(unit: Unit, node: Node) -> str | None:
    if node.type == "string_literal":
        return unquote(unit.text(node))
    if node.type == "element_value_array_initializer":
        for child in node.named_children:
            if child.type == "string_literal":
                return unquote(unit.text(child))
    return None

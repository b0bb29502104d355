"""Kotlin: classes, interfaces, enum classes, objects, functions and methods,
``const val`` properties, type aliases; JUnit/kotlin.test tests; Spring
mapping annotations; top-level ``fun main``. Files share the JVM module system
with Java (packages, imports, implicit ``this``)."""

from __future__ import annotations

import posixpath
import re

import tree_sitter_kotlin
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
from strata.code.languages.java import JvmModules
from strata.code.model import Import, SymbolKind

_COMMENTS = frozenset({"block_comment", "line_comment"})
_TEST_ANNOTATIONS = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory"})
_MAPPINGS = {
    "GetMapping": "GET",
    "PostMapping": "POST",
    "PutMapping": "PUT",
    "DeleteMapping": "DELETE",
    "PatchMapping": "PATCH",
    "RequestMapping": None,
}
_TEST_FILE = re.compile(r"^(Test\w*|\w+(Test|Tests|IT))\.kts?$")
_FIRST_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_REQUEST_METHOD = re.compile(r"RequestMethod\.(\w+)")
_BODIES = frozenset({"class_body", "enum_class_body", "function_body"})


class KotlinAdapter(LanguageAdapter):
    language = "kotlin"
    extensions = (".kt", ".kts")
    query_file = "kotlin"
    module_system = JvmModules()
    # tree-sitter-kotlin 1.0.1 and 1.1.0 never return from parsing `val x = 1\n@get:S`
    # (an annotation cut off at the end of the file, no newline after it): a push of
    # such a file hung its index. With the newline the parse ends.
    final_newline = True
    framework_imports = (
        ("org.springframework", "spring"),
        ("org.junit", "junit"),
        ("kotlin.test", "kotlin.test"),
        ("io.ktor", "ktor"),
    )

    def grammar(self) -> object:
        return tree_sitter_kotlin.language()

    def is_test_path(self, path: str) -> bool:
        return "src/test/" in f"/{path}" or bool(_TEST_FILE.match(posixpath.basename(path)))

    def on_definition(
        self, unit: Unit, kind: SymbolKind, node: Node, name: Node, caps: dict[str, list[Node]]
    ) -> Decl | None:
        modifiers = _words(unit, _modifiers(node))
        if kind == "constant" and "const" not in modifiers:
            return None
        if node.type == "class_declaration":
            if any(c.type == "interface" for c in node.children):
                kind = "interface"
            elif "enum" in modifiers:
                kind = "enum"
        return Decl(name=unit.text(name), kind=kind, node=node)

    def describe(self, unit: Unit, decl: Decl) -> None:
        node = decl.node
        mods = _modifiers(node)
        annotations = [c for c in mods.named_children if c.type == "annotation"] if mods else []
        decl.decorator_nodes = annotations
        decl.decorators = [collapse(unit.text(a))[1:].strip() for a in annotations]
        body = next((c for c in node.named_children if c.type in _BODIES), None)
        stop = body.start_byte if body is not None else node.end_byte
        decl.signature = signature(unit, node.start_byte, stop, annotations)
        docs = doc_comments_above(node, _is_kdoc, _COMMENTS)
        if docs:
            decl.docstring = clean_doc(strip_block_comment(unit.text(docs[-1])))
        specifiers = next(
            (c for c in node.named_children if c.type == "delegation_specifiers"), None
        )
        for spec in specifiers.named_children if specifiers is not None else []:
            invocation = next(
                (c for c in spec.named_children if c.type == "constructor_invocation"), None
            )
            target = invocation.named_children[0] if invocation is not None else spec
            written = collapse(unit.text(target))
            # `: Base()` calls the superclass constructor; a bare type is an interface
            # (for an interface, every listed type is a base interface).
            if invocation is not None or decl.kind == "interface":
                decl.bases.append(written)
            else:
                decl.implements.append(written)

    def on_import_form(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        node = caps[role][0]
        path = next((c for c in node.named_children if c.type == "qualified_identifier"), None)
        if path is None:
            return
        module = collapse(unit.text(path))
        if collapse(unit.text(node)).replace(" ", "").endswith(".*"):
            module += ".*"
        alias_node = next((c for c in node.named_children if c.type == "identifier"), None)
        alias = unit.text(alias_node) if alias_node is not None else None
        unit.imports.append(Import(module=module, line=node.start_point.row + 1, alias=alias))

    def finish(self, unit: Unit) -> None:
        framework = "kotlin.test" if "kotlin.test" in unit.frameworks else "junit"
        prefixes: dict[str, str] = {}
        for d in unit.symbols():
            names = {_simple_name(a) for a in d.decorators}
            if d.kind == "class":
                mapping = _mapping(d, "RequestMapping")
                if mapping is not None:
                    prefixes[d.qualname] = mapping[1]
                continue
            if d.kind == "function" and d.name == "main" and d.enclosing is None:
                d.entrypoint = "fun main"
                unit.add_entrypoint("fun main")
            if d.kind != "method":
                continue
            if names & _TEST_ANNOTATIONS:
                d.test_framework = framework
                unit.is_test_file = True
                continue
            for annotation in _MAPPINGS:
                mapping = _mapping(d, annotation)
                if mapping is not None:
                    methods, path = mapping
                    prefix = prefixes.get(d.enclosing.qualname, "") if d.enclosing else ""
                    d.entrypoint = _routes.http(methods, prefix, path)
                    d.framework = "spring"
                    break


def _modifiers(node: Node) -> Node | None:
    return next((c for c in node.named_children if c.type == "modifiers"), None)


def _words(unit: Unit, modifiers: Node | None) -> set[str]:
    if modifiers is None:
        return set()
    return {unit.text(c) for c in modifiers.named_children if c.type != "annotation"}


def _is_kdoc(node: Node) -> bool:
    text = node.text or b""
    return text.startswith(b"/**") and not text.startswith(b"/**/")


def _simple_name(annotation: str) -> str:
    return annotation.split("(", 1)[0].rsplit(".", 1)[-1].strip()


def _mapping(decl: Decl, wanted: str) -> tuple[list[str], str] | None:
    """(methods, path) of a Spring mapping annotation on ``decl``, if present."""
    for written in decl.decorators:
        if _simple_name(written) != wanted:
            continue
        fixed = _MAPPINGS[wanted]
        arguments = written.partition("(")[2]
        match = _FIRST_STRING.search(arguments)
        path = unquote(match.group(0)) if match else ""
        methods = [fixed] if fixed else _REQUEST_METHOD.findall(arguments)
        return methods, path
    return None

"""C#: classes, records, interfaces, structs, enums, delegates, methods and
constructors (overloads numbered), local functions, ``const`` and ``static
readonly`` fields; xUnit/NUnit/MSTest tests; ASP.NET controller attributes and
minimal APIs; ``static void Main`` and top-level statements."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

import tree_sitter_c_sharp
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
    strip_line_comments,
    unquote,
)
from strata.code.languages.module_system import (
    Binding,
    FileScope,
    Manifest,
    ModuleSystem,
)
from strata.code.model import FileExtract, Import, SymbolDef, SymbolKind

if TYPE_CHECKING:
    from strata.code.modules import ModuleIndex

_COMMENTS = frozenset({"comment"})
_TESTS = {
    "Fact": "xunit",
    "Theory": "xunit",
    "Test": "nunit",
    "TestCase": "nunit",
    "TestCaseSource": "nunit",
    "TestMethod": "mstest",
    "DataTestMethod": "mstest",
}
_HTTP_ATTRIBUTES = {
    "HttpGet": "GET",
    "HttpPost": "POST",
    "HttpPut": "PUT",
    "HttpDelete": "DELETE",
    "HttpPatch": "PATCH",
    "HttpHead": "HEAD",
    "HttpOptions": "OPTIONS",
}
_MINIMAL_API = {
    "MapGet": "GET",
    "MapPost": "POST",
    "MapPut": "PUT",
    "MapDelete": "DELETE",
    "MapPatch": "PATCH",
}
_INTERFACE_NAME = re.compile(r"^I[A-Z]")
_SUMMARY = re.compile(r"</?summary>")
_MAIN = "static void Main"


class DotnetModules(ModuleSystem):
    """Namespaces: a file answers to its namespace; ``using N`` brings N's types in
    (a wildcard), ``using A = N.T`` one type; files of one namespace see each
    other; bare names in a class body reach its members (implicit ``this``)."""

    family = "dotnet"
    manifests = (Manifest("*.csproj", "dotnet"),)
    class_body_is_scope = True
    overloads_by_arity = True
    bare_calls_reach_own_class = True

    def module_names(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        return [extract.package or ""]

    def bind(
        self, index: ModuleIndex, path: str, extract: FileExtract, imp: Import, scope: FileScope
    ) -> list[Binding]:
        if imp.alias:
            namespace, _, name = imp.module.rpartition(".")
            found = index.symbol_in(self.modules(index, namespace).paths, name)
            binding: Binding = found or self.modules(index, imp.module)
            scope.bindings[imp.alias] = binding
            return [binding]
        target = self.modules(index, imp.module)
        scope.wildcards.append(target)
        return [target]

    def siblings(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        return self.package_siblings(index, path, extract)

    def qualified_name(
        self, module: str | None, extract: FileExtract, symbol: SymbolDef
    ) -> str | None:
        return f"{extract.package}.{symbol.qualname}" if extract.package else None


class CSharpAdapter(LanguageAdapter):
    language = "csharp"
    extensions = (".cs",)
    query_file = "csharp"
    inferred_types = frozenset({"var", "dynamic"})
    module_system = DotnetModules()
    framework_imports = (
        ("Microsoft.AspNetCore", "aspnet"),
        ("Xunit", "xunit"),
        ("NUnit.Framework", "nunit"),
        ("Microsoft.VisualStudio.TestTools.UnitTesting", "mstest"),
    )
    super_receivers = frozenset({"base"})

    def grammar(self) -> object:
        return tree_sitter_c_sharp.language()

    def is_test_path(self, path: str) -> bool:
        return posixpath.basename(path).endswith(("Tests.cs", "Test.cs"))

    def on_definition(
        self, unit: Unit, kind: SymbolKind, node: Node, name: Node, caps: dict[str, list[Node]]
    ) -> Decl | None:
        if node.type == "record_declaration" and any(c.type == "struct" for c in node.children):
            kind = "struct"  # record struct
        decl = Decl(name=unit.text(name), kind=kind, node=node)
        if kind != "constant":
            return decl
        declaration = node.parent
        field = declaration.parent if declaration is not None else None
        if declaration is None or field is None:
            return None
        words = {unit.text(c) for c in field.named_children if c.type == "modifier"}
        if "const" not in words and not {"static", "readonly"} <= words:
            return None
        if sum(1 for c in declaration.named_children if c.type == "variable_declarator") == 1:
            decl.outer = field
        return decl

    def describe(self, unit: Unit, decl: Decl) -> None:
        node = decl.node
        declaration = node.parent if decl.kind == "constant" else None
        field = declaration.parent if declaration is not None else None
        holder = field or node
        lists = [c for c in holder.named_children if c.type == "attribute_list"]
        attributes = [a for lst in lists for a in lst.named_children if a.type == "attribute"]
        decl.decorator_nodes = attributes
        decl.decorators = [collapse(unit.text(a)) for a in attributes]
        if field is not None and declaration is not None:
            type_node = declaration.child_by_field_name("type")
            decl.signature = field_signature(unit, field, type_node, node, lists)
        else:
            body = node.child_by_field_name("body")
            stop = body.start_byte if body is not None else node.end_byte
            decl.signature = signature(unit, node.start_byte, stop, lists)
        docs = doc_comments_above(holder, _is_xml_doc, _COMMENTS)
        if docs:
            text = strip_line_comments((unit.text(d) for d in docs), "///")
            decl.docstring = clean_doc(_SUMMARY.sub("", text))
        base_list = next((c for c in node.named_children if c.type == "base_list"), None)
        if base_list is not None:
            _split_bases(unit, decl, base_list)

    def on_import_form(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        node = caps[role][0]
        alias = node.child_by_field_name("name")
        targets = [
            c
            for c in node.named_children
            if c.type in ("qualified_name", "identifier", "generic_name", "alias_qualified_name")
            and (alias is None or c.id != alias.id)
        ]
        if targets:
            unit.imports.append(
                Import(
                    module=collapse(unit.text(targets[-1])),
                    line=node.start_point.row + 1,
                    alias=unit.text(alias) if alias is not None else None,
                )
            )

    def before_link(self, unit: Unit) -> None:
        _add_minimal_api_routes(unit)
        if any(c.type == "global_statement" for c in unit.root.named_children):
            unit.add_entrypoint(_MAIN)  # top-level statements are the program's Main

    def finish(self, unit: Unit) -> None:
        prefixes: dict[str, str] = {}
        for d in unit.symbols():
            attributes = {_attribute_name(unit, a): a for a in d.decorator_nodes}
            if d.kind == "class" and "Route" in attributes:
                template = _first_string(unit, attributes["Route"]) or ""
                prefixes[d.qualname] = template.replace(
                    "[controller]", d.name.removesuffix("Controller")
                )
            if d.kind != "method":
                continue
            tests = [_TESTS[name] for name in attributes if name in _TESTS]
            if tests:
                framework = tests[0]
                if framework == "xunit" and "nunit" in unit.frameworks:
                    framework = "nunit"  # NUnit has [Theory] too
                d.test_framework = framework
                unit.is_test_file = True
            elif d.name == "Main" and "static" in _modifiers(unit, d.node):
                d.entrypoint = _MAIN
                unit.add_entrypoint(_MAIN)
            _mark_controller_route(unit, d, attributes, prefixes)


def _modifiers(unit: Unit, node: Node) -> set[str]:
    return {unit.text(c) for c in node.named_children if c.type == "modifier"}


def _is_xml_doc(node: Node) -> bool:
    text = node.text or b""
    return text.startswith(b"///") and not text.startswith(b"////")


def _split_bases(unit: Unit, decl: Decl, base_list: Node) -> None:
    """C# does not mark base class and interfaces apart: by convention ``IName``
    is an interface; structs only implement; interfaces only extend."""
    for child in base_list.named_children:
        if child.type == "comment":
            continue
        type_node = (
            child.child_by_field_name("type")
            if child.type == "primary_constructor_base_type"
            else child
        )
        text = collapse(unit.text(type_node if type_node is not None else child))
        if decl.kind == "interface":
            decl.bases.append(text)
        elif decl.kind in ("struct", "enum") or _INTERFACE_NAME.match(text.rsplit(".", 1)[-1]):
            decl.implements.append(text)
        else:
            decl.bases.append(text)


def _attribute_name(unit: Unit, attribute: Node) -> str:
    name = attribute.child_by_field_name("name")
    text = unit.text(name) if name is not None else unit.text(attribute)
    return text.rsplit(".", 1)[-1].split("<", 1)[0].removesuffix("Attribute")


def _first_string(unit: Unit, attribute: Node) -> str | None:
    args = next((c for c in attribute.named_children if c.type == "attribute_argument_list"), None)
    for arg in args.named_children if args is not None else []:
        value = arg.named_child(0) if arg.named_child_count else None
        if value is not None and value.type in ("string_literal", "verbatim_string_literal"):
            return unquote(unit.text(value))
    return None


def _mark_controller_route(
    unit: Unit, decl: Decl, attributes: dict[str, Node], prefixes: dict[str, str]
) -> None:
    methods = [_HTTP_ATTRIBUTES[n] for n in attributes if n in _HTTP_ATTRIBUTES]
    if not methods and "Route" not in attributes:
        return
    template = next(
        (
            t
            for n in attributes
            if n in _HTTP_ATTRIBUTES or n == "Route"
            for t in [_first_string(unit, attributes[n])]
            if t is not None
        ),
        "",
    )
    template = template.replace("[action]", decl.name)
    prefix = prefixes.get(decl.enclosing.qualname, "") if decl.enclosing is not None else ""
    if template.startswith(("/", "~/")):  # absolute: ignores the controller route
        prefix, template = "", template.removeprefix("~")
    decl.entrypoint = _routes.http(methods or ["ANY"], prefix, template)
    decl.framework = "aspnet"


def _add_minimal_api_routes(unit: Unit) -> None:
    """``app.MapGet("/x", handler)``: a lambda becomes a route symbol; a named
    method of this file is marked; anything else marks the file."""
    methods: dict[str, Decl] = {}
    for d in unit.decls:
        methods.setdefault(d.name, d)
    for call in list(unit.calls):
        if call.name not in _MINIMAL_API or call.arguments is None:
            continue
        args = [a.named_child(0) for a in call.arguments.named_children if a.type == "argument"]
        if len(args) < 2 or args[0] is None or args[0].type != "string_literal":
            continue
        entrypoint = _routes.http([_MINIMAL_API[call.name]], unquote(unit.text(args[0])))
        handler = args[-1]
        if handler is not None and handler.type == "lambda_expression":
            unit.add_decl(
                Decl(
                    name=f"route:{entrypoint.removeprefix('http ')}",
                    kind="function",
                    node=handler,
                    synthetic=True,
                    entrypoint=entrypoint,
                    framework="aspnet",
                )
            )
            continue
        name = (
            handler.child_by_field_name("name")
            if handler is not None and handler.type == "member_access_expression"
            else handler
        )
        target = methods.get(unit.text(name)) if name is not None else None
        if target is not None and target.entrypoint is None:
            target.entrypoint, target.framework = entrypoint, "aspnet"
        else:
            unit.add_entrypoint(entrypoint, "aspnet")

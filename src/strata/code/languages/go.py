"""Go: structs, interfaces (with their methods), other types, functions, methods
named ``Receiver.Method``, package-level constants; go test functions; ``func
main`` in package main; net/http, chi, gin and echo routes."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

import tree_sitter_go
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
# go test: TestXxx, BenchmarkXxx, FuzzXxx, ExampleXxx; the next letter is not lower case
_TEST_FUNC = re.compile(r"^(Test|Benchmark|Fuzz|Example)(?![a-z])")
_TEST_FRAMEWORK = "go"
# handler registration calls per framework: call name -> HTTP method (None: from the pattern)
_ROUTE_CALLS: dict[str, dict[str, str | None]] = {
    "nethttp": {"HandleFunc": None, "Handle": None},
    "chi": {
        **{m.capitalize(): m for m in ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")},
        "HandleFunc": None,
        "Handle": None,
    },
    "gin": {
        **{m: m for m in ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")},
        "Any": "ANY",
    },
    "echo": {
        **{m: m for m in ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")},
        "Any": "ANY",
    },
}
_HTTP_PATTERN = re.compile(r"^([A-Z]+)\s+(\S+)$")
# the keyword a grouped declaration (`type ( ... )`) leaves out of each spec
_KEYWORDS = {"type_spec": "type ", "type_alias": "type ", "const_spec": "const "}


class GoModules(ModuleSystem):
    """Directories are packages, imported by path under their go.mod module;
    files of one directory see each other."""

    family = "go"
    manifests = (Manifest("go.mod", "go", re.compile(rb"^module\s+(\S+)", re.M)),)
    receiver_variable_is_self = True
    structural_interfaces = True

    def module_names(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        """Import paths of the file's directory under each go.mod, then the directory."""
        directory = posixpath.dirname(path)
        names = []
        for module in index.packages_in("go"):
            prefix = module.path + "/" if module.path else ""
            if directory == module.path or directory.startswith(prefix):
                rel = directory[len(module.path) :].lstrip("/")
                names.append(f"{module.name}/{rel}" if rel else module.name)
        names.append(directory)
        return names

    def bind(
        self, index: ModuleIndex, path: str, extract: FileExtract, imp: Import, scope: FileScope
    ) -> list[Binding]:
        target = self.modules(index, imp.module)
        alias = imp.alias or imp.module.rsplit("/", 1)[-1]
        if alias in ("_",):
            return [target]
        if alias == ".":
            scope.wildcards.append(target)
        else:
            scope.bindings[alias] = target
        return [target]

    def siblings(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        return [p for p in index.by_dir.get(posixpath.dirname(path), ()) if p != path]

    def qualified_name(
        self, module: str | None, extract: FileExtract, symbol: SymbolDef
    ) -> str | None:
        return f"{extract.package}.{symbol.qualname}" if extract.package else None


class GoAdapter(LanguageAdapter):
    language = "go"
    extensions = (".go",)
    query_file = "go"
    module_system = GoModules()
    framework_imports = (
        ("net/http", "nethttp"),
        ("github.com/go-chi/chi", "chi"),
        ("github.com/gin-gonic/gin", "gin"),
        ("github.com/labstack/echo", "echo"),
    )

    def grammar(self) -> object:
        return tree_sitter_go.language()

    def is_test_path(self, path: str) -> bool:
        return path.endswith("_test.go")

    def framework_of_import(self, module: str) -> str | None:
        if module.startswith("net/http/"):  # httptest, pprof: no server routes
            return None
        return super().framework_of_import(module)

    def on_definition(
        self, unit: Unit, kind: SymbolKind, node: Node, name: Node, caps: dict[str, list[Node]]
    ) -> Decl | None:
        decl = Decl(name=unit.text(name), kind=kind, node=node)
        parent = node.parent
        if (
            parent is not None
            and parent.type in ("type_declaration", "const_declaration")
            and not (parent.child_count > 1 and parent.child(1).type == "(")
        ):
            decl.outer = parent  # `type Foo struct {...}`, not a grouped `type (...)`
        if node.type == "method_declaration":
            decl.owner, decl.self_name = _receiver(unit, node)
        return decl

    def describe(self, unit: Unit, decl: Decl) -> None:
        node = decl.node
        keyword = "" if decl.outer is not None else _KEYWORDS.get(node.type, "")
        start = decl.outer.start_byte if decl.outer is not None else node.start_byte
        body = node.child_by_field_name("body")
        type_node = node.child_by_field_name("type")
        if body is not None:
            stop = body.start_byte
        elif type_node is not None and type_node.type in ("struct_type", "interface_type"):
            stop = type_node.children[0].end_byte  # up to the keyword
            decl.bases = _embedded(unit, type_node)
        else:
            stop = node.end_byte
        head = signature(unit, start, stop)
        decl.signature = f"{keyword}{head}"[:300] if head else None
        docs = doc_comments_above(decl.first_node(), lambda n: True, _COMMENTS)
        if docs:
            decl.docstring = _doc_text(unit, docs)

    def on_import(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        module = unquote(unit.text(caps["module"][0]))
        alias = unit.text(caps["alias"][0]) if "alias" in caps else None
        line = caps[role][0].start_point.row + 1
        # a dot import brings every exported name in unqualified: a wildcard
        names = ("*",) if alias == "." else ()
        unit.imports.append(Import(module=module, line=line, names=names, alias=alias))

    def before_link(self, unit: Unit) -> None:
        _add_routes(unit)

    def finish(self, unit: Unit) -> None:
        for d in unit.symbols():
            if d.kind != "function" or d.enclosing is not None:
                continue
            if unit.is_test_file and _TEST_FUNC.match(d.name) and d.name != "TestMain":
                d.test_framework = _TEST_FRAMEWORK
            elif d.name == "main" and unit.package == "main":
                d.entrypoint = "func main"
                unit.add_entrypoint("func main")


def _receiver(unit: Unit, method: Node) -> tuple[str | None, str | None]:
    """(receiver type name, receiver variable) of ``func (s *Server[T]) M()``."""
    receiver = method.child_by_field_name("receiver")
    param = (
        next((c for c in receiver.named_children if c.type == "parameter_declaration"), None)
        if receiver is not None
        else None
    )
    if param is None:
        return None, None
    var = param.child_by_field_name("name")
    type_node = param.child_by_field_name("type")
    while type_node is not None and type_node.type in ("pointer_type", "generic_type"):
        inner = type_node.child_by_field_name("type")
        type_node = inner if inner is not None else type_node.named_child(0)
    owner = unit.text(type_node) if type_node is not None else None
    return owner, unit.text(var) if var is not None else None


def _embedded(unit: Unit, type_node: Node) -> list[str]:
    """Embedded types of a struct (fields without a name) or an interface."""
    found: list[str] = []
    if type_node.type == "struct_type":
        fields = next(
            (c for c in type_node.named_children if c.type == "field_declaration_list"), None
        )
        for field in fields.named_children if fields is not None else []:
            if field.type == "field_declaration" and field.child_by_field_name("name") is None:
                embedded = field.child_by_field_name("type")
                if embedded is not None:
                    found.append(collapse(unit.text(embedded)).lstrip("*"))
    else:
        found = [collapse(unit.text(c)) for c in type_node.named_children if c.type == "type_elem"]
    return found


def _doc_text(unit: Unit, docs: list[Node]) -> str | None:
    if len(docs) == 1 and unit.text(docs[0]).startswith("/*"):
        return clean_doc(strip_block_comment(unit.text(docs[0])))
    lines = [unit.text(d) for d in docs if unit.text(d).startswith("//")]
    lines = [line for line in lines if not line.startswith(("//go:", "//nolint"))]
    return clean_doc(strip_line_comments(lines, "//")) if lines else None


def _add_routes(unit: Unit) -> None:
    active = [f for f in ("nethttp", "chi", "gin", "echo") if f in unit.frameworks]
    if not active:
        return
    functions: dict[str, Decl] = {}
    for d in unit.decls:
        functions.setdefault(d.name, d)
    for call in list(unit.calls):
        if call.receiver is None or call.arguments is None:
            continue
        framework = next((f for f in reversed(active) if call.name in _ROUTE_CALLS[f]), None)
        args = [a for a in call.arguments.named_children if a.type != "comment"]
        if framework is None or len(args) < 2 or args[0].type != "interpreted_string_literal":
            continue
        method = _ROUTE_CALLS[framework][call.name]
        path = unquote(unit.text(args[0]))
        match = _HTTP_PATTERN.match(path) if method is None else None
        if match:  # Go 1.22 patterns: "GET /items/{id}"
            method, path = match.group(1), match.group(2)
        entrypoint = _routes.http([method or "ANY"], path)
        _attach(unit, functions, args[-1], entrypoint, framework)


def _attach(
    unit: Unit, functions: dict[str, Decl], handler: Node, entrypoint: str, framework: str
) -> None:
    """Mark the handler: a function of this file, a func literal, or else the file."""
    if handler.type == "func_literal":
        unit.add_decl(
            Decl(
                name=f"route:{entrypoint.removeprefix('http ')}",
                kind="function",
                node=handler,
                synthetic=True,
                entrypoint=entrypoint,
                framework=framework,
            )
        )
        return
    if handler.type == "call_expression":  # http.HandlerFunc(h)
        args = handler.child_by_field_name("arguments")
        inner = [a for a in args.named_children if a.type != "comment"] if args else []
        if len(inner) == 1:
            handler = inner[0]
    name_node = (
        handler.child_by_field_name("field") if handler.type == "selector_expression" else handler
    )
    target = functions.get(unit.text(name_node)) if name_node is not None else None
    if target is not None and target.entrypoint is None and name_node is not None:
        target.entrypoint, target.framework = entrypoint, framework
    else:
        unit.add_entrypoint(entrypoint, framework)

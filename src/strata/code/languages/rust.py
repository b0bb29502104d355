"""Rust: structs, unions, enums, traits (with their methods), functions, impl
methods named ``Type.method``, modules, const/static items, type aliases; cargo
tests; ``fn main`` of binaries; actix-web/rocket route attributes."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import tree_sitter_rust
from tree_sitter import Node

from strata.code.languages import _routes
from strata.code.languages._text import MAX_RECEIVER
from strata.code.languages.base import (
    Decl,
    LanguageAdapter,
    RawCall,
    Unit,
    clean_doc,
    collapse,
    decode,
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
    ModuleTarget,
    SymbolTarget,
)
from strata.code.model import FileExtract, Import, SymbolDef, SymbolKind

if TYPE_CHECKING:
    from strata.code.modules import ModuleIndex

_COMMENTS = frozenset({"line_comment", "block_comment"})
_CHAIN_TOKENS = frozenset({"identifier", "self", "token_tree", ".", "::"})
_TEST_ATTRIBUTES = frozenset(
    {
        "test",
        "tokio::test",
        "async_std::test",
        "rstest",
        "test_case",
        "actix_rt::test",
        "actix_web::test",
    }
)
_ROUTE_ATTRIBUTES = frozenset({"get", "post", "put", "delete", "patch", "head", "options", "route"})
_ROUTE_FRAMEWORKS = ("actix", "rocket")


_SMART_POINTERS = frozenset({"Box", "Rc", "Arc"})


class RustModules(ModuleSystem):
    """``crate::a::b`` module paths from the file path; ``use`` with ``self::``/``super::``."""

    family = "rust"
    manifests = (Manifest("Cargo.toml", "cargo", re.compile(rb'^\s*name\s*=\s*"([^"]+)"', re.M)),)

    def module_names(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        return [_module_path(path)]

    def bind(
        self, index: ModuleIndex, path: str, extract: FileExtract, imp: Import, scope: FileScope
    ) -> list[Binding]:
        module = _absolute(path, imp.module)
        target = self.modules(index, module)
        if not imp.names:
            name = imp.alias or module.rsplit("::", 1)[-1]
            if target.paths:
                scope.bindings[name] = target
                return [target]
            parent, _, last = module.rpartition("::")
            found = index.symbol_in(self.modules(index, parent).paths, last)
            binding: Binding = found or target
            scope.bindings[name] = binding
            return [binding]
        bound: list[Binding] = []
        for name in imp.names:
            if name == "*":
                scope.wildcards.append(target)
                bound.append(target)
                continue
            sub = self.modules(index, f"{module}::{name}")
            inner: Binding | None = sub if sub.paths else index.symbol_in(target.paths, name)
            binding = inner or ModuleTarget(f"{module}::{name}", ())
            scope.bindings[imp.alias or name] = binding
            bound.append(binding)
        return bound

    def public_api(
        self, index: ModuleIndex, scope: Callable[[str], FileScope]
    ) -> Iterable[SymbolTarget]:
        """A library crate's ``pub`` items: those of ``src/lib.rs``, of the ``pub mod``s
        it reaches, and what their ``pub use``s bring in."""
        for package in index.packages_in("cargo"):
            lib = posixpath.join(package.path, "src/lib.rs")
            if lib in index.files:
                yield from _pub_items(index, scope, lib, set())

    def qualified_name(
        self, module: str | None, extract: FileExtract, symbol: SymbolDef
    ) -> str | None:
        return f"{module}::{symbol.qualname.replace('.', '::')}" if module else None


class RustAdapter(LanguageAdapter):
    language = "rust"
    extensions = (".rs",)
    query_file = "rust"
    module_system = RustModules()
    framework_imports = (("actix_web", "actix"), ("rocket", "rocket"), ("axum", "axum"))

    def grammar(self) -> object:
        return tree_sitter_rust.language()

    def type_name(self, unit: Unit, node: Node) -> str | None:
        """``Box<T>``, ``Rc<T>`` and ``Arc<T>`` call ``T``'s methods (they dereference to it)."""
        inner = node.child_by_field_name("type") if node.type == "reference_type" else node
        if inner is not None and inner.type == "generic_type":
            outer = inner.child_by_field_name("type")
            arguments = inner.child_by_field_name("type_arguments")
            if outer is not None and unit.text(outer) in _SMART_POINTERS and arguments is not None:
                types = [c for c in arguments.named_children if c.type != "comment"]
                return self.type_name(unit, types[0]) if len(types) == 1 else None
        return super().type_name(unit, node)

    def is_test_path(self, path: str) -> bool:
        parts = path.split("/")
        return "tests" in parts[:-1] or parts[-1] in ("tests.rs", "test.rs")

    def on_definition(
        self, unit: Unit, kind: SymbolKind, node: Node, name: Node, caps: dict[str, list[Node]]
    ) -> Decl | None:
        decl = Decl(name=unit.text(name), kind=kind, node=node)
        attributes, docs = _attributes_and_docs(node)
        if attributes:
            decl.outer = attributes[0]
            decl.decorator_nodes = attributes
            decl.decorators = [collapse(unit.text(a))[2:-1].strip() for a in attributes]
        if docs:
            decl.docstring = _doc_text(unit, docs)
        return decl

    def describe(self, unit: Unit, decl: Decl) -> None:
        node = decl.node
        body = node.child_by_field_name("body")
        stop = body.start_byte if body is not None else node.end_byte
        decl.signature = signature(unit, node.start_byte, stop)
        bounds = node.child_by_field_name("bounds") if decl.kind == "trait" else None
        if bounds is not None:
            decl.bases = [collapse(unit.text(b)) for b in bounds.named_children]

    def on_scope(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        impl = caps[role][0]
        decl = Decl(name=_type_name(unit, caps["name"][0]), kind="class", node=impl, emit=False)
        if "trait" in caps:
            decl.implements = [collapse(unit.text(caps["trait"][0]))]
        unit.add_decl(decl)

    def on_reference(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        """``name(...)`` inside macro arguments, when the two tokens touch."""
        name, args = caps["name"][0], caps["arguments"][0]
        if (
            name.end_byte != args.start_byte
            or unit.source[args.start_byte : args.start_byte + 1] != b"("
        ):
            return
        receiver_start: int | None = None
        separator = name.prev_sibling
        if separator is not None and separator.type in (".", "::"):
            # the chain before the separator: `a.b()`, `Cart::new()`, `x.y().z`
            node = separator.prev_sibling
            while node is not None and node.type in _CHAIN_TOKENS:
                receiver_start = node.start_byte
                node = node.prev_sibling
        receiver: str | None = None
        start = name.start_byte
        if receiver_start is not None and separator is not None:
            start = receiver_start
            written = collapse(decode(unit.source[start : separator.start_byte]))
            receiver = self.normalize_receiver(written[:MAX_RECEIVER]) or None
        unit.add_call(
            RawCall(
                node=name,
                callee=collapse(decode(unit.source[start : name.end_byte])),
                name=unit.text(name),
                receiver=receiver,
                start=name.start_byte,
                line=name.start_point.row + 1,
                arguments=args,
            )
        )

    def on_import_form(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        line = caps[role][0].start_point.row + 1
        first = caps[role][0].named_children[:1]
        public = (
            bool(first)
            and first[0].type == "visibility_modifier"
            and (unit.text(first[0]) == "pub")
        )
        for module, names, alias in _flatten_use(unit, caps["tree"][0], []):
            unit.imports.append(Import(module=module, line=line, names=names, alias=alias))
            if public and names != ("*",):  # `pub use a::B`: the module exports B
                exported = alias or (names[0] if names else module.rsplit("::", 1)[-1])
                unit.exports.append((exported, exported))

    def finish(self, unit: Unit) -> None:
        unit.package = _crate_path(unit.path)
        types = {d.name: d for d in unit.symbols() if d.enclosing is None}
        for scope in unit.decls:
            if not scope.emit and scope.implements:
                target = types.get(scope.name)
                if target is not None and scope.implements[0] not in target.implements:
                    target.implements.append(scope.implements[0])
        route_framework = next((f for f in _ROUTE_FRAMEWORKS if f in unit.frameworks), None)
        for d in unit.symbols():
            if d.enclosing is not None and not d.enclosing.emit:
                d.implements = list(d.enclosing.implements)  # `impl Trait for Type` methods
            if d.kind not in ("function", "method"):
                continue
            if _is_test(d):
                d.test_framework = "cargo"
            elif d.name == "main" and d.enclosing is None and _is_binary(unit.path):
                d.entrypoint = "fn main"
                unit.add_entrypoint("fn main")
            if route_framework is not None:
                _mark_route(unit, d, route_framework)


def _attributes_and_docs(node: Node) -> tuple[list[Node], list[Node]]:
    """The attributes and outer doc comments directly above an item, top first."""
    attributes: list[Node] = []
    docs: list[Node] = []
    expected = node.start_point.row
    prev = node.prev_named_sibling
    while prev is not None and prev.end_point.row >= expected - 1:
        if prev.type == "attribute_item":
            attributes.append(prev)
        elif prev.type in _COMMENTS and _is_outer_doc(prev):
            docs.append(prev)
        else:
            break
        expected = prev.start_point.row
        prev = prev.prev_named_sibling
    attributes.reverse()
    docs.reverse()
    return attributes, docs


def _is_outer_doc(node: Node) -> bool:
    return any(c.type == "outer_doc_comment_marker" for c in node.named_children)


def _doc_text(unit: Unit, docs: list[Node]) -> str | None:
    texts = [unit.text(d) for d in docs]
    if texts and texts[0].startswith("/**"):
        return clean_doc(strip_block_comment(texts[0]))
    return clean_doc(strip_line_comments((t for t in texts if t.startswith("///")), "///"))


def _type_name(unit: Unit, node: Node) -> str:
    """``Cart`` for ``Cart<T>``, ``&'a Cart``, ``crate::shop::Cart``."""
    while node.type in ("generic_type", "reference_type", "pointer_type"):
        inner = node.child_by_field_name("type")
        if inner is None:
            break
        node = inner
    if node.type == "scoped_type_identifier":
        name = node.child_by_field_name("name")
        node = name if name is not None else node
    return collapse(unit.text(node))


def _flatten_use(
    unit: Unit, node: Node, prefix: list[str]
) -> list[tuple[str, tuple[str, ...], str | None]]:
    """One (module, names, alias) per leaf of a use tree, iteratively."""
    found: list[tuple[str, tuple[str, ...], str | None]] = []
    stack: list[tuple[Node, list[str]]] = [(node, prefix)]
    while stack:
        current, path = stack.pop()
        kind = current.type
        if kind == "use_list":
            stack.extend(
                (c, path) for c in reversed(current.named_children) if c.type != "line_comment"
            )
        elif kind == "scoped_use_list":
            head = current.child_by_field_name("path")
            items = current.child_by_field_name("list")
            if items is not None:
                stack.append((items, path + ([unit.text(head)] if head is not None else [])))
        elif kind == "use_as_clause":
            target = current.child_by_field_name("path")
            alias = current.child_by_field_name("alias")
            if target is not None:
                module, name = _split(path, unit.text(target))
                named = unit.text(alias) if alias else None
                # `use std as tokio`: a bare path is the module itself, as without `as`
                found.append((module, (name,), named) if module else (name, (), named))
        elif kind == "use_wildcard":
            head = current.named_child(0) if current.named_child_count else None
            segments = path + ([unit.text(head)] if head is not None else [])
            found.append(("::".join(segments), ("*",), None))
        elif kind == "self" and path:
            found.append(
                ("::".join(path[:-1]) or path[-1], (path[-1],) if len(path) > 1 else (), None)
            )
        else:
            module, name = _split(path, unit.text(current))
            found.append((module, (name,), None) if module else (name, (), None))
    return found


def _split(path: list[str], written: str) -> tuple[str, str]:
    """(module, last name) of ``path::written``; module is empty for a bare name. A
    leading ``::`` (``::tokio``, the extern crate, not a local module) is dropped."""
    segments = [s for s in (*path, *written.split("::")) if s] or [written]
    return "::".join(segments[:-1]), segments[-1]


def _crate_path(path: str) -> str | None:
    """``crate::a::b`` for ``.../src/a/b.rs`` (``a/mod.rs`` is ``crate::a``, ``lib.rs``,
    ``main.rs`` and ``src/bin/*`` are ``crate``); None outside a ``src`` folder."""
    parts = path.split("/")
    folders = parts[:-1]
    if "src" not in folders:
        return None
    inner = parts[len(folders) - folders[::-1].index("src") :]
    if inner[0] == "bin" and len(inner) > 1:
        return "crate"
    stem = posixpath.splitext(inner[-1])[0]
    segments = inner[:-1]
    if stem != "mod" and not (len(inner) == 1 and stem in ("lib", "main")):
        segments = [*segments, stem]
    return "::".join(["crate", *segments])


def _is_binary(path: str) -> bool:
    parts = path.split("/")
    return parts[-1] == "main.rs" or (len(parts) >= 3 and parts[-3:-1] == ["src", "bin"])


def _is_test(decl: Decl) -> bool:
    if any(a.split("(", 1)[0].strip() in _TEST_ATTRIBUTES for a in decl.decorators):
        return True
    current = decl.enclosing
    while current is not None:
        if current.kind == "module" and any(
            a.replace(" ", "") == "cfg(test)" for a in current.decorators
        ):
            return True
        current = current.enclosing
    return False


def _mark_route(unit: Unit, decl: Decl, framework: str) -> None:
    """``#[get("/x")]`` / ``#[route("/x", method = "GET")]`` (actix-web, rocket)."""
    for attribute in decl.decorator_nodes:
        inner = attribute.named_child(0)
        if inner is None:
            continue
        head = inner.named_child(0)
        args = inner.child_by_field_name("arguments")
        name = unit.text(head) if head is not None else ""
        if name not in _ROUTE_ATTRIBUTES or args is None:
            continue
        strings = [unquote(unit.text(c)) for c in args.named_children if c.type == "string_literal"]
        if not strings:
            continue
        methods = [name] if name != "route" else [s for s in strings[1:] if s.isalpha()]
        decl.entrypoint = _routes.http(methods or ["ANY"], strings[0])
        decl.framework = framework
        return


def _pub_items(
    index: ModuleIndex, scope: Callable[[str], FileScope], path: str, seen: set[str]
) -> Iterable[SymbolTarget]:
    if path in seen:
        return
    seen.add(path)
    extract = index.files[path]
    module = _module_path(path)
    for symbol in extract.symbols:
        if symbol.parent is not None or not _is_pub(symbol.signature):
            continue
        if symbol.kind != "module":
            yield SymbolTarget(path, symbol.qualname)
            continue
        for sub in index.modules(RustModules.family, f"{module}::{symbol.name}").paths:
            yield from _pub_items(index, scope, sub, seen)
    bindings = scope(path).bindings
    for name, _ in extract.exports:  # `pub use`
        bound = bindings.get(name)
        if isinstance(bound, SymbolTarget):
            yield bound
        elif bound is not None:
            for sub in bound.paths:
                yield from _pub_items(index, scope, sub, seen)


def _is_pub(signature: str | None) -> bool:
    """``pub`` alone: ``pub(crate)`` and ``pub(super)`` stay inside the crate."""
    return bool(signature) and (signature or "").startswith("pub ")


def _module_path(path: str) -> str:
    """The module a file is, from its path under ``src`` (``lib``/``main``/``mod`` are
    their folder)."""
    parts = path.split("/")
    if "src" in parts:
        parts = parts[parts.index("src") + 1 :]
    stem = posixpath.splitext(parts[-1])[0] if parts else ""
    parts = parts[:-1]
    if stem not in ("lib", "main", "mod"):
        parts.append(stem)
    return "::".join(["crate", *parts])


def _absolute(path: str, module: str) -> str:
    """``self::`` and ``super::`` paths made absolute (``crate::...``)."""
    current = _module_path(path)
    if module.startswith("self::"):
        return current + module[len("self") :]
    if module.startswith("super::"):
        parent = current.rsplit("::", 1)[0] if "::" in current else current
        return parent + module[len("super") :]
    return module

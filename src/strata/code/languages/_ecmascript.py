"""What JavaScript, TypeScript and TSX share: declarations wrapped in ``export``,
decorators, JSDoc, ``require``, jest/vitest test calls, Express and NestJS routes."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar

from tree_sitter import Node

from strata.code.languages import _routes
from strata.code.languages._overloads import fold_overloads
from strata.code.languages.base import (
    Decl,
    LanguageAdapter,
    Unit,
    clean_doc,
    collapse,
    doc_comments_above,
    plain_type,
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
from strata.code.model import FileExtract, Import, SymbolKind

if TYPE_CHECKING:
    from strata.code.modules import ModuleIndex

_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "generator_function"})
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
_COMMENTS = frozenset({"comment"})
# test functions and their jest/vitest aliases -> the name used in qualnames
_TEST_CALLS = {
    "describe": "describe",
    "fdescribe": "describe",
    "xdescribe": "describe",
    "suite": "describe",
    "it": "it",
    "fit": "it",
    "xit": "it",
    "test": "test",
    "xtest": "test",
}
_TEST_MODIFIERS = frozenset({"only", "skip", "todo", "concurrent", "failing", "sequential"})
_EXPRESS_METHODS = frozenset({"get", "post", "put", "delete", "patch", "options", "head", "all"})
_NEST_METHODS = {
    "Get": "GET",
    "Post": "POST",
    "Put": "PUT",
    "Delete": "DELETE",
    "Patch": "PATCH",
    "Options": "OPTIONS",
    "Head": "HEAD",
    "All": "ANY",
}


def is_test_path(path: str) -> bool:
    """jest/vitest defaults: ``*.test.*``, ``*.spec.*`` or anything under ``__tests__``."""
    parts = path.split("/")
    stem_parts = parts[-1].split(".")[1:-1]
    return "__tests__" in parts[:-1] or "test" in stem_parts or "spec" in stem_parts


# stripped from a path to get its module name, longest first (".d.ts" before ".ts")
_MODULE_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


class EcmaScriptModules(ModuleSystem):
    """Relative specifiers resolve to files (an index file answers to its folder);
    bare specifiers are packages, external."""

    family = "ecmascript"
    manifests = (
        Manifest(
            "package.json",
            "npm",
            re.compile(rb'"name"\s*:\s*"([^"]+)"'),
            # `"main": "..."`, `types`, `module`, `"exports": "..."`, `".": "..."`
            re.compile(rb'"(?:main|module|types|typings|exports|\.)"\s*:\s*"([^"]+)"'),
        ),
    )
    bare_calls_reach_own_class = True

    def module_names(self, index: ModuleIndex, path: str, extract: FileExtract) -> list[str]:
        stem = _stem(path)
        names = [stem]
        if posixpath.basename(stem) == "index":
            names.append(posixpath.dirname(stem))
        return names

    def bind(
        self, index: ModuleIndex, path: str, extract: FileExtract, imp: Import, scope: FileScope
    ) -> list[Binding]:
        spec = imp.module
        if spec.startswith("."):
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
            target = self.modules(index, joined)
        else:
            target = ModuleTarget(spec, ())
        if not imp.names:
            # `const S = require("./s")` of a module that is `module.exports = S`: S itself
            whole = exported(index, target.paths, MODULE_ITSELF, None) if target.paths else None
            if imp.alias:
                scope.bindings[imp.alias] = whole or target
            return [whole or target]
        bound: list[Binding] = []
        for name in imp.names:
            if name == "*":
                if imp.alias:
                    scope.bindings[imp.alias] = target
                else:
                    scope.wildcards.append(target)
                bound.append(target)
                continue
            found = exported(index, target.paths, name, imp.alias)
            binding: Binding = found or target
            scope.bindings[imp.alias or name] = binding
            bound.append(binding)
        return bound

    def reexported(
        self, index: ModuleIndex, module: ModuleTarget, name: str
    ) -> SymbolTarget | None:
        return exported(index, module.paths, name, None)

    def public_api(
        self, index: ModuleIndex, scope: Callable[[str], FileScope]
    ) -> Iterable[SymbolTarget]:
        """What each npm package's entry files export, through ``export {x} from``,
        ``export *`` and barrels: those its package.json names (``main``, ``types``,
        ``exports``...) that are in the repository, else ``index.*`` at its root."""
        for package in index.packages_in("npm"):
            named = (posixpath.normpath(posixpath.join(package.path, e)) for e in package.entries)
            entries = {p for e in named for p in self.modules(index, _stem(e)).paths}
            root = posixpath.join(package.path, "index") if package.path else "index"
            paths = tuple(sorted(entries)) or self.modules(index, root).paths
            for name in sorted(export_names(index, paths)):
                found = exported(index, paths, name, None)
                if found is not None:
                    yield found


def _stem(path: str) -> str:
    """The module name of a path: without its extension."""
    for ext in _MODULE_EXTENSIONS:
        if path.endswith(ext):
            return path[: -len(ext)]
    return posixpath.splitext(path)[0]


MODULE_ITSELF = "="  # the export name of `module.exports = X`
MAX_REEXPORTS = 8


def exported(
    index: ModuleIndex,
    paths: tuple[str, ...],
    name: str,
    alias: str | None,
    depth: int = 0,
) -> SymbolTarget | None:
    """The declaration a module exports as ``name``: its own (renamed by ``export {a as
    b}``, ``exports.b = a``, ``module.exports = X``), or one it re-exports (``export {x}
    from``, ``export *``, an imported name it passes on: a barrel file)."""
    if depth > MAX_REEXPORTS:
        return None
    for candidate in paths:
        extract = index.files[candidate]
        renamed = dict(getattr(extract, "exports", ()))  # older cached extracts: none
        local = renamed.get(name, renamed.get(MODULE_ITSELF) if name == "default" else name)
        if local is None and name == "default":
            found = _default_export(index, (candidate,), alias)
            if found is not None:
                return found
            continue
        if local is None:
            continue
        symbol = index.top_level.get(candidate, {}).get(local)
        if symbol is not None:
            return SymbolTarget(candidate, symbol.qualname)
        found = _reexported(index, candidate, extract, local, depth)
        if found is not None:
            return found
    return None


def export_names(index: ModuleIndex, paths: tuple[str, ...], depth: int = 0) -> set[str]:
    """The names a module exports: its own ``export``s and what its ``export *`` passes on."""
    names: set[str] = set()
    if depth > MAX_REEXPORTS:
        return names
    for candidate in paths:
        extract = index.files[candidate]
        names.update(name for name, _ in getattr(extract, "exports", ()))
        for imp in extract.imports:
            if imp.names == ("*",) and imp.alias is None and imp.module.startswith("."):
                folder = posixpath.dirname(candidate)
                joined = posixpath.normpath(posixpath.join(folder, imp.module))
                star = index.modules(EcmaScriptModules.family, joined).paths
                names.update(n for n in export_names(index, star, depth + 1) if n != "default")
    return names


def _reexported(
    index: ModuleIndex, path: str, extract: FileExtract, name: str, depth: int
) -> SymbolTarget | None:
    for imp in extract.imports:
        if not imp.module.startswith("."):
            continue
        if imp.names == ("*",) and imp.alias is None:
            wanted = name  # export * from "./m"
        elif imp.names and (imp.alias or imp.names[0]) == name and imp.names != ("*",):
            wanted = imp.names[0]
        else:
            continue
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), imp.module))
        paths = index.modules(EcmaScriptModules.family, joined).paths
        found = exported(index, paths, wanted, None, depth + 1)
        if found is not None:
            return found
    return None


def _default_export(
    index: ModuleIndex, paths: tuple[str, ...], alias: str | None
) -> SymbolTarget | None:
    """The top-level symbol named like the local alias, else a file's only callable."""
    for candidate in paths:
        tops = index.top_level.get(candidate, {})
        if alias and alias in tops:
            return SymbolTarget(candidate, tops[alias].qualname)
        callables = [s for s in tops.values() if s.kind in ("function", "class")]
        if len(callables) == 1:
            return SymbolTarget(candidate, callables[0].qualname)
    return None


class EcmaScriptAdapter(LanguageAdapter):
    """Base of the JavaScript, TypeScript and TSX adapters."""

    module_system: ClassVar[ModuleSystem] = EcmaScriptModules()

    framework_imports = (
        ("express", "express"),
        ("@nestjs", "nestjs"),
        ("vitest", "vitest"),
        ("@jest/globals", "jest"),
    )

    def is_test_path(self, path: str) -> bool:
        return is_test_path(path)

    def on_definition(
        self, unit: Unit, kind: SymbolKind, node: Node, name: Node, caps: dict[str, list[Node]]
    ) -> Decl | None:
        if kind == "constant":
            value = node.child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES:
                return None  # a function, matched by its own pattern
        decl = Decl(name=unit.text(name), kind=kind, node=node)
        holder = node
        if node.type == "variable_declarator":
            statement = node.parent
            if statement is None or statement.type not in _DECLARATIONS:
                return decl
            if statement.named_child_count == 1:
                decl.outer = statement
            holder = statement
        decorators = [c for c in node.children if c.type == "decorator"]
        if decorators:  # decorator calls run in the enclosing scope, not in this one
            decl.scope = (decorators[-1].end_byte, node.end_byte)
        wrapper = holder.parent
        if wrapper is not None and wrapper.type == "export_statement":
            decl.outer = wrapper
            if not any(c.type == "default" for c in wrapper.children):
                unit.exports.append((decl.name, decl.name))  # `export function f`: as f
            decorators = [c for c in wrapper.children if c.type == "decorator"] + decorators
        elif wrapper is not None and wrapper.type == "class_body":
            before = []
            prev = node.prev_named_sibling
            while prev is not None and prev.type == "decorator":
                before.append(prev)
                prev = prev.prev_named_sibling
            if before:
                decl.outer = before[-1]
                decorators = before[::-1] + decorators
        decl.decorator_nodes = decorators
        decl.decorators = [collapse(unit.text(d))[1:].strip() for d in decorators]
        return decl

    def describe(self, unit: Unit, decl: Decl) -> None:
        node = decl.node
        start = node.start_byte
        body = node.child_by_field_name("body")
        if node.type in ("variable_declarator", "public_field_definition", "field_definition"):
            statement = node.parent
            if node.type == "variable_declarator" and statement is not None:
                start = statement.start_byte
            value = node.child_by_field_name("value")
            body = value.child_by_field_name("body") if value is not None else None
            if decl.kind == "constant":
                body = None
        stop = body.start_byte if body is not None else node.end_byte
        decl.signature = signature(unit, start, stop, decl.decorator_nodes)
        docs = doc_comments_above(decl.first_node(), _is_jsdoc, _COMMENTS)
        if docs:
            decl.docstring = clean_doc(strip_block_comment(unit.text(docs[-1])))
        if decl.kind in ("class", "interface"):
            _heritage(unit, decl)

    def on_import_form(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        """``require("m")``: bound to a name, destructured, or bare."""
        call = caps[role][0]
        module = unit.text(caps["module"][0])
        line = call.start_point.row + 1
        parent = call.parent
        target = parent.child_by_field_name("name") if parent is not None else None
        if parent is None or parent.type != "variable_declarator" or target is None:
            unit.imports.append(Import(module=module, line=line))
        elif target.type == "identifier":
            unit.imports.append(Import(module=module, line=line, alias=unit.text(target)))
        elif target.type == "object_pattern":
            for prop in target.named_children:
                if prop.type == "shorthand_property_identifier_pattern":
                    unit.imports.append(Import(module, line, names=(unit.text(prop),)))
                elif prop.type == "pair_pattern":
                    key, value = prop.child_by_field_name("key"), prop.child_by_field_name("value")
                    if key is not None and value is not None:
                        imported, alias = unit.text(key), unit.text(value)
                        unit.imports.append(Import(module, line, names=(imported,), alias=alias))
        else:
            unit.imports.append(Import(module=module, line=line))

    def type_name(self, unit: Unit, node: Node) -> str | None:
        """``Promise<T>`` is ``T`` (what ``await`` gives; a ``.then`` on it reaches
        nothing of the repository either way)."""
        if node.type == "generic_type":
            name = node.child_by_field_name("name")
            arguments = node.child_by_field_name("type_arguments")
            if name is not None and unit.text(name) == "Promise" and arguments is not None:
                inner = [c for c in arguments.named_children if c.type != "comment"]
                return self.type_name(unit, inner[0]) if len(inner) == 1 else None
        return plain_type(unit.text(node))

    def on_export(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        form = role.split(".", 1)[1]
        if form == "object":  # module.exports = { a, b: c }
            for prop in caps["object"][0].named_children:
                if prop.type == "shorthand_property_identifier":
                    unit.exports.append((unit.text(prop), unit.text(prop)))
                elif prop.type == "pair":
                    key, value = prop.child_by_field_name("key"), prop.child_by_field_name("value")
                    if key is not None and value is not None and value.type == "identifier":
                        written = unit.text(key)
                        exported = unquote(written) if written[:1] in "'\"" else written
                        unit.exports.append((exported, unit.text(value)))
            return
        local = unit.text(caps["local"][0])
        if form == "module":
            unit.exports.append((MODULE_ITSELF, local))
        elif form == "default":
            unit.exports.append(("default", local))
        else:  # `export { a }` and re-exports keep their name
            alias = caps.get("exported")
            unit.exports.append((unit.text(alias[0]) if alias else local, local))

    def before_link(self, unit: Unit) -> None:
        fold_overloads(unit, _overload_signature)  # overload signatures are the function
        if unit.is_test_file:
            _add_tests(unit, "vitest" if "vitest" in unit.frameworks else "jest")
        if "express" in unit.frameworks:
            _add_express_routes(unit)

    def finish(self, unit: Unit) -> None:
        if "nestjs" in unit.frameworks:
            _mark_nest_routes(unit)


def _overload_signature(decl: Decl) -> bool:
    return decl.node.type in ("function_signature", "method_signature")


def _is_jsdoc(node: Node) -> bool:
    text = node.text or b""
    return text.startswith(b"/**") and not text.startswith(b"/**/")


def _heritage(unit: Unit, decl: Decl) -> None:
    for child in decl.node.named_children:
        if child.type == "class_heritage":
            for clause in child.named_children:
                if clause.type == "extends_clause":
                    decl.bases.extend(_clause_types(unit, clause))
                elif clause.type == "implements_clause":
                    decl.implements.extend(collapse(unit.text(t)) for t in clause.named_children)
                elif clause.type != "comment":  # JavaScript: `extends <expression>`
                    decl.bases.append(collapse(unit.text(clause)))
        elif child.type == "extends_type_clause":  # interface I extends A, B
            decl.bases.extend(collapse(unit.text(t)) for t in child.named_children)


def _clause_types(unit: Unit, clause: Node) -> list[str]:
    """``extends Base<T>``: the value with its type arguments, as written."""
    names: list[str] = []
    for child in clause.named_children:
        if child.type == "type_arguments" and names:
            names[-1] += collapse(unit.text(child))
        else:
            names.append(collapse(unit.text(child)))
    return names


def _string_arg(unit: Unit, node: Node | None) -> str | None:
    if node is None:
        return None
    if node.type == "string" or (
        node.type == "template_string"
        and not any(c.type == "template_substitution" for c in node.named_children)
    ):
        return unquote(unit.text(node))
    return None


def _args(node: Node | None) -> list[Node]:
    if node is None:
        return []
    return [c for c in node.named_children if c.type != "comment"]


def _add_tests(unit: Unit, framework: str) -> None:
    for call in list(unit.calls):
        if call.receiver is None:
            label = _TEST_CALLS.get(call.name)
        elif call.name in _TEST_MODIFIERS:
            label = _TEST_CALLS.get(call.receiver)
        else:
            label = None
        args = _args(call.arguments)
        if label is None or not args:
            continue
        title = _string_arg(unit, args[0])
        if title is None:
            title = collapse(unit.text(args[0]))
        callback = next((a for a in args[1:] if a.type in _FUNCTION_VALUES), None)
        unit.add_decl(
            Decl(
                name=f"{label}:{title}",
                kind="function",
                node=call.node,
                scope=(callback.start_byte, callback.end_byte)
                if callback is not None
                else (call.node.end_byte, call.node.end_byte),
                synthetic=True,
                test_framework=framework if label != "describe" else None,
            )
        )


def _add_express_routes(unit: Unit) -> None:
    functions: dict[str, Decl] = {}
    for d in unit.decls:  # the first function of that name (before nesting is known)
        if d.kind == "function":
            functions.setdefault(d.name, d)
    for call in list(unit.calls):
        if call.receiver is None or call.name not in _EXPRESS_METHODS:
            continue
        args = _args(call.arguments)
        path = _string_arg(unit, args[0]) if args else None
        if path is None or len(args) < 2:
            continue
        entrypoint = _routes.http([call.name if call.name != "all" else "ANY"], path)
        handler = args[-1]
        if handler.type == "call_expression":  # asyncHandler(async (req, res) => ...)
            inner = _args(handler.child_by_field_name("arguments"))
            handler = inner[-1] if inner else handler
        named = functions.get(unit.text(handler)) if handler.type == "identifier" else None
        if handler.type in _FUNCTION_VALUES:
            unit.add_decl(
                Decl(
                    name=f"route:{entrypoint.removeprefix('http ')}",
                    kind="function",
                    node=call.node,
                    scope=(handler.start_byte, handler.end_byte),
                    synthetic=True,
                    entrypoint=entrypoint,
                    framework="express",
                )
            )
        elif named is not None and named.entrypoint is None:
            named.entrypoint, named.framework = entrypoint, "express"
        else:
            unit.add_entrypoint(entrypoint, "express")


def _decorator_call(unit: Unit, decorator: Node) -> tuple[str, list[Node]]:
    """(name, arguments) of ``@Name(...)`` / ``@Name``."""
    target = decorator.named_child(0) if decorator.named_child_count else None
    if target is None:
        return "", []
    if target.type == "call_expression":
        function = target.child_by_field_name("function")
        name = unit.text(function) if function is not None else ""
        return name, _args(target.child_by_field_name("arguments"))
    return unit.text(target), []


def _mark_nest_routes(unit: Unit) -> None:
    prefixes: dict[str, str] = {}
    for d in unit.symbols():
        if d.kind == "class":
            for deco in d.decorator_nodes:
                name, args = _decorator_call(unit, deco)
                if name == "Controller":
                    prefixes[d.qualname] = _string_arg(unit, args[0] if args else None) or ""
        elif d.kind == "method" and d.enclosing is not None and d.enclosing.qualname in prefixes:
            for deco in d.decorator_nodes:
                name, args = _decorator_call(unit, deco)
                if name in _NEST_METHODS:
                    path = _string_arg(unit, args[0] if args else None) or ""
                    prefix = prefixes[d.enclosing.qualname]
                    d.entrypoint = _routes.http([_NEST_METHODS[name]], prefix, path)
                    d.framework = "nestjs"
                    break

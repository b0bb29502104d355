"""The flow IR of a Python file, from its tree-sitter tree after linking.

One query (run in C) finds the statements that move values: assignments,
``return``, ``for``, ``with``, walrus, ``global``; the calls come from the
unit's own call list, so each :class:`FlowCall` carries exactly the caller,
line and callee text of its :class:`~strata.code.model.CallSite`. The scope
of a node is its nearest enclosing declaration (a lambda is none: what it
does belongs to the symbol around it).
"""

from __future__ import annotations

import builtins
import sys
import threading
from typing import TYPE_CHECKING

from tree_sitter import Language, Node, Query, QueryCursor

from strata.code.flow.model import (
    Annot,
    Assign,
    Attr,
    Call,
    Container,
    Either,
    Expr,
    FileFlow,
    FlowCall,
    Function,
    Implicit,
    Item,
    Name,
    Param,
    Protocol,
    Super,
)
from strata.code.model import FileExtract, Import

if TYPE_CHECKING:
    from strata.code.languages._unit import Decl, Unit

__all__ = ["FileExtract", "attach", "build", "collect"]  # FileExtract: for the adapter's hook

_STATEMENTS = """
(assignment) @assign
(return_statement) @return
(yield) @yield
(for_statement) @for
(for_in_clause) @for
(with_item) @with
(except_clause) @except
(named_expression) @walrus
(global_statement) @global
(nonlocal_statement) @global
(import_statement) @import
(import_from_statement) @import
"""
_QUERY: dict[int, Query] = {}
_LOCK = threading.Lock()
_PENDING = threading.local()
_SCOPES = frozenset({"function_definition", "class_definition"})
_CONTAINERS = frozenset({"list", "tuple", "set", "expression_list"})
_MAX_DEPTH = 12
_EXPRESSIONS = frozenset(
    {
        "attribute", "call", "subscript", "list", "tuple", "set", "expression_list",
        "dictionary", "parenthesized_expression", "await", "boolean_operator",
        "conditional_expression",
    }
)  # fmt: skip
# A bare call of a builtin the file does not rebind reaches nothing in the repository
# and passes its arguments to nothing the solver follows: no FlowCall for it.
_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_"))
# Builtins that call a protocol method of their first argument.
_PROTOCOL_BUILTINS = {
    "len": "__len__", "str": "__str__", "repr": "__repr__", "iter": "__iter__",
    "next": "__next__", "hash": "__hash__", "bool": "__bool__", "abs": "__abs__",
    "format": "__format__", "reversed": "__reversed__", "bytes": "__bytes__",
}  # fmt: skip


def _query(language: Language) -> Query:
    key = id(language)
    found = _QUERY.get(key)
    if found is None:
        with _LOCK:
            found = _QUERY.setdefault(key, Query(language, _STATEMENTS))
    return found


def collect(unit: Unit, language: Language) -> None:
    """Build the flow of a linked unit and hold it until :func:`attach` (same thread)."""
    _PENDING.value = (unit.path, build(unit, language))


def attach(extract: FileExtract) -> FileExtract:
    """``extract`` with the flow :func:`collect` built for its file."""
    from dataclasses import replace

    pending = getattr(_PENDING, "value", None)
    _PENDING.value = None
    if pending is None or pending[0] != extract.path:
        return extract
    return replace(extract, flow=pending[1])


def build(unit: Unit, language: Language) -> FileFlow:
    """The :class:`FileFlow` of a linked unit."""
    return _Builder(unit).run(language)


class _Builder:
    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self.decls: dict[int, Decl] = {
            d.node.id: d for d in unit.decls if d.emit and d.node.type in _SCOPES
        }
        self.functions_by_name = {
            d.qualname: d.node.type == "function_definition" for d in self.decls.values()
        }
        self.returns: dict[str, list[Expr]] = {}
        self.yields: dict[str, list[Expr]] = {}
        self.globals: dict[str, list[str]] = {}
        self.local_imports: list[tuple[int, str]] = []
        self.assigns: list[Assign] = []
        self.implicits: list[Implicit] = []
        self.exports: tuple[str, ...] | None = None
        self._at = (0, -1)  # line and block of the statement being read
        self._blocks: dict[int, int] = {}  # node id -> start byte of its block
        # One Name per identifier and one Attr per name of a shared object (``self.x``,
        # ``os.path``) in a file: ~860k Names on sympy were mostly repeats. Nothing
        # else is shared: a literal is a value of its own (its box), wherever it sits.
        self._names: dict[str, Name] = {}
        self._attrs: dict[tuple[int, str], Attr] = {}
        self._shared: set[int] = set()  # ids of the shared ones (held by the two maps)
        source = unit.source
        self._source = source

    def text(self, node: Node) -> str:
        # Interned: the same identifiers recur across thousands of expressions.
        return sys.intern(self._source[node.start_byte : node.end_byte].decode("utf-8", "replace"))

    def block_of(self, node: Node) -> int:
        """Start byte of the block holding ``node`` (statements in it run in order)."""
        seen: list[int] = []
        current = node.parent
        found = -1
        while current is not None:
            cached = self._blocks.get(current.id)
            if cached is not None:
                found = cached
                break
            if current.type in ("block", "module"):
                found = current.start_byte
                break
            seen.append(current.id)
            current = current.parent
        for node_id in seen:
            self._blocks[node_id] = found
        return found

    def scope_of(self, node: Node) -> str | None:
        current = node.parent
        while current is not None:
            if current.type in _SCOPES:
                decl = self.decls.get(current.id)
                if decl is not None:
                    return decl.qualname
            current = current.parent
        return None

    def run(self, language: Language) -> FileFlow:
        for _, caps in QueryCursor(_query(language)).matches(self.unit.root):
            for role, nodes in caps.items():
                for node in nodes:
                    self.statement(role, node)
        functions = tuple(
            self.function(d) for d in self.decls.values() if d.node.type == "function_definition"
        )
        rebound = {d.name for d in self.unit.decls}
        rebound.update(a.target.id for a in self.assigns if isinstance(a.target, Name))
        rebound.update(p.name for f in functions for p in f.params)
        wildcard = False
        for imp in self.unit.imports:
            wildcard = wildcard or "*" in imp.names
            rebound.update(_bound_names(imp))
        calls = tuple(
            self.call(c.node, c.caller, c.callee, c.line)
            for c in self.unit.calls
            if wildcard or bool(c.receiver) or c.callee not in _BUILTINS or c.callee in rebound
        )
        for c in self.unit.calls:
            protocol = _PROTOCOL_BUILTINS.get(c.callee)
            if protocol is not None and not c.receiver and c.callee not in rebound:
                self._protocol_call(c.node, c.caller, c.line, protocol)
        return FileFlow(
            functions=functions,
            assigns=tuple(self.assigns),
            calls=tuple(c for c in calls if c is not None),
            implicits=tuple(self.implicits),
            local_imports=tuple(self.local_imports),
            exports=self.exports,
        )

    # -- statements ----------------------------------------------------------------

    def statement(self, role: str, node: Node) -> None:
        scope = self.scope_of(node)
        self._at = (node.start_point.row + 1, self.block_of(node))
        getattr(self, f"_on_{role}")(scope, node, node.start_point.row + 1)

    def _on_assign(self, scope: str | None, node: Node, line: int) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        kind = node.child_by_field_name("type")
        if left is None:
            return
        if kind is not None:
            self.bind(scope, left, Annot(self.text(kind)))
        if scope is None and right is not None and self.text(left) == "__all__":
            self.exports = _strings(self, right)
        if right is not None:
            # `a = b = v`: the inner assignment is matched on its own; both get v.
            self.bind(scope, left, self.expr(_innermost_value(right)))

    def _on_return(self, scope: str | None, node: Node, line: int) -> None:
        value = node.named_child(0) if node.named_child_count else None
        expr = self.expr(value) if value is not None else None
        if scope is not None and expr is not None:
            self.returns.setdefault(scope, []).append(expr)

    def _on_yield(self, scope: str | None, node: Node, line: int) -> None:
        value = node.named_child(0) if node.named_child_count else None
        if value is None or scope is None or any(c.type == "from" for c in node.children):
            return  # `yield from g` passes g's values on: not followed
        expr = self.expr(value)
        if expr is not None:
            self.yields.setdefault(scope, []).append(expr)

    def _on_for(self, scope: str | None, node: Node, line: int) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        obj = self.expr(right) if right is not None else None
        if obj is None or left is None:
            return
        iterator = Protocol(obj, "__iter__")
        self.implicits.append(Implicit(scope, line, obj, "__iter__"))
        self.implicits.append(Implicit(scope, line, iterator, "__next__"))
        self.bind(scope, left, Either((Protocol(iterator, "__next__"), Item(obj))))

    def _on_with(self, scope: str | None, node: Node, line: int) -> None:
        value = node.child_by_field_name("value")
        target: Node | None = None
        if value is not None and value.type == "as_pattern":
            alias = value.child_by_field_name("alias")
            target = alias.named_child(0) if alias is not None and alias.named_child_count else None
            value = value.named_child(0)
        obj = self.expr(value) if value is not None else None
        if obj is None:
            return
        self.implicits.append(Implicit(scope, line, obj, "__enter__"))
        self.implicits.append(Implicit(scope, line, obj, "__exit__"))
        if target is not None:
            self.bind(scope, target, Protocol(obj, "__enter__"))

    def _on_except(self, scope: str | None, node: Node, line: int) -> None:
        # `except (A, B) as err:` binds err to an instance of A or B.
        value = node.child_by_field_name("value")
        if value is None or value.type != "as_pattern" or not value.named_child_count:
            return
        alias = value.child_by_field_name("alias")
        target = alias.named_child(0) if alias is not None and alias.named_child_count else None
        if target is not None:
            self.bind(scope, target, Annot(self.text(value.named_children[0])))

    def _protocol_call(self, node: Node, caller: Decl | None, line: int, method: str) -> None:
        """``len(x)`` runs ``x.__len__``: an implicit call on the first argument."""
        arguments = node.child_by_field_name("arguments")
        first = arguments.named_child(0) if arguments is not None else None
        obj = self.expr(first) if first is not None else None
        if obj is not None:
            scope = caller.qualname if caller is not None else None
            self.implicits.append(Implicit(scope, line, obj, method))

    def _on_walrus(self, scope: str | None, node: Node, line: int) -> None:
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is not None and value is not None:
            self.bind(scope, name, self.expr(value))

    def _on_import(self, scope: str | None, node: Node, line: int) -> None:
        if scope is not None and self.functions_by_name.get(scope):
            self.local_imports.append((line, scope))

    def _on_global(self, scope: str | None, node: Node, line: int) -> None:
        if scope is not None:
            names = [self.text(c) for c in node.named_children if c.type == "identifier"]
            self.globals.setdefault(scope, []).extend(names)

    def bind(self, scope: str | None, target: Node, value: Expr | None) -> None:
        if value is None:
            return
        kind = target.type
        if kind in ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list"):
            parts = [c for c in target.named_children if c.type != "comment"]
            items = value.items if isinstance(value, Container) else None
            for index, part in enumerate(parts):
                if items is not None and len(items) == len(parts):
                    self.bind(scope, part, items[index])
                else:
                    self.bind(scope, part, Item(value))
            return
        if kind == "parenthesized_expression" and target.named_child_count:
            self.bind(scope, target.named_children[0], value)
            return
        written = self.expr(target)
        if isinstance(written, Name | Attr | Item):
            self.assigns.append(Assign(scope, written, value, *self._at))

    # -- functions and calls -----------------------------------------------------------

    def function(self, decl: Decl) -> Function:
        node = decl.node
        params = node.child_by_field_name("parameters")
        returned = node.child_by_field_name("return_type")
        decorators = tuple(
            e
            for e in (
                self.expr(d.named_child(0)) for d in decl.decorator_nodes if d.named_child_count
            )
            if e is not None
        )
        return Function(
            qualname=decl.qualname,
            params=self.params(params) if params is not None else (),
            returns=tuple(self.returns.get(decl.qualname, ())),
            annotation=self.text(returned) if returned is not None else None,
            decorators=decorators,
            globals=tuple(self.globals.get(decl.qualname, ())),
            yields=tuple(self.yields.get(decl.qualname, ())),
        )

    def params(self, node: Node) -> tuple[Param, ...]:
        out: list[Param] = []
        keyword_only = False
        for child in node.named_children:
            kind = child.type
            if kind == "identifier":
                out.append(Param(self.text(child), "kw" if keyword_only else "pos"))
            elif kind in ("typed_parameter", "default_parameter", "typed_default_parameter"):
                name = child.child_by_field_name("name")
                first = child.named_child(0) if child.named_child_count else None
                annotation = child.child_by_field_name("type")
                default = child.child_by_field_name("value")
                if name is None and first is not None and first.type == "identifier":
                    name = first
                if name is None:  # *args: T / **kw: T
                    splat = first
                    if splat is not None and splat.type in (
                        "list_splat_pattern",
                        "dictionary_splat_pattern",
                    ):
                        star = "star" if splat.type == "list_splat_pattern" else "dstar"
                        keyword_only = keyword_only or star == "star"
                        inner = splat.named_child(0) if splat.named_child_count else None
                        if inner is not None:
                            out.append(Param(self.text(inner), star))
                    continue
                out.append(
                    Param(
                        self.text(name),
                        "kw" if keyword_only else "pos",
                        self.text(annotation) if annotation is not None else None,
                        self.expr(default) if default is not None else None,
                    )
                )
            elif kind in ("list_splat_pattern", "dictionary_splat_pattern"):
                inner = child.named_child(0) if child.named_child_count else None
                star = "star" if kind == "list_splat_pattern" else "dstar"
                keyword_only = keyword_only or star == "star"
                if inner is not None:
                    out.append(Param(self.text(inner), star))
            elif kind == "keyword_separator":
                keyword_only = True
        return tuple(out)

    def call(self, node: Node, caller: Decl | None, callee: str, line: int) -> FlowCall | None:
        function = node.child_by_field_name("function")
        func = self.expr(function) if function is not None else None
        if func is None:
            return None
        args: list[Expr | None] = []
        keywords: list[tuple[str, Expr]] = []
        arguments = node.child_by_field_name("arguments")
        if arguments is not None and arguments.type == "argument_list":
            for arg in arguments.named_children:
                if arg.type == "keyword_argument":
                    key, value = arg.child_by_field_name("name"), arg.child_by_field_name("value")
                    expr = self.expr(value) if value is not None else None
                    if key is not None and expr is not None:
                        keywords.append((self.text(key), expr))
                elif arg.type in ("list_splat", "dictionary_splat"):
                    break  # positions after a splat are unknown
                elif arg.type != "comment":
                    args.append(self.expr(arg))
        return FlowCall(
            caller.qualname if caller is not None else None,
            line,
            callee,
            func,
            tuple(args),
            tuple(keywords),
            self.block_of(node),
        )

    # -- expressions -------------------------------------------------------------------

    def name(self, text: str) -> Name:
        found = self._names.get(text)
        if found is None:
            found = self._names[text] = Name(text)
            self._shared.add(id(found))
        return found

    def attr(self, obj: Expr, name: str) -> Attr:
        if id(obj) not in self._shared:
            return Attr(obj, name)
        key = (id(obj), name)
        found = self._attrs.get(key)
        if found is None:
            found = self._attrs[key] = Attr(obj, name)
            self._shared.add(id(found))
        return found

    def expr(self, node: Node | None, depth: int = 0) -> Expr | None:
        if node is None or depth > _MAX_DEPTH:
            return None
        kind = node.type
        if kind == "identifier":
            return self.name(self.text(node))
        if kind not in _EXPRESSIONS:
            return None  # literals, operators, comprehensions, lambdas: no value the IR has
        if kind == "attribute":
            obj = self.expr(node.child_by_field_name("object"), depth + 1)
            attr = node.child_by_field_name("attribute")
            return self.attr(obj, self.text(attr)) if obj is not None and attr is not None else None
        if kind == "call":
            function = node.child_by_field_name("function")
            if function is not None and self.text(function) == "super":
                return Super()
            func = self.expr(function, depth + 1)
            return Call(func) if func is not None else None
        if kind == "subscript":
            value = self.expr(node.child_by_field_name("value"), depth + 1)
            return Item(value) if value is not None else None
        if kind in _CONTAINERS:
            items = (self.expr(c, depth + 1) for c in node.named_children)
            return Container(tuple(i for i in items if i is not None))
        if kind == "dictionary":
            values = (
                self.expr(p.child_by_field_name("value"), depth + 1)
                for p in node.named_children
                if p.type == "pair"
            )
            return Container(tuple(v for v in values if v is not None))
        if kind in ("parenthesized_expression", "await") and node.named_child_count:
            return self.expr(node.named_children[0], depth + 1)
        if kind == "boolean_operator":
            return _either(
                self.expr(node.child_by_field_name("left"), depth + 1),
                self.expr(node.child_by_field_name("right"), depth + 1),
            )
        if kind == "conditional_expression" and node.named_child_count >= 2:
            children = node.named_children
            return _either(self.expr(children[0], depth + 1), self.expr(children[-1], depth + 1))
        return None


def _strings(builder: _Builder, node: Node) -> tuple[str, ...]:
    """The plain string literals of a list or tuple literal (``__all__``)."""
    if node.type not in ("list", "tuple"):
        return ()
    found = []
    for child in node.named_children:
        if child.type != "string":
            continue
        parts = [c for c in child.named_children if c.type == "string_content"]
        if len(parts) == 1:
            found.append(builder.text(parts[0]))
    return tuple(found)


def _bound_names(imp: Import) -> tuple[str, ...]:
    """The names an import statement binds in its file."""
    if imp.alias:
        return (imp.alias,)
    return imp.names or (imp.module.split(".", 1)[0],)


def _innermost_value(node: Node) -> Node:
    while node.type == "assignment":
        right = node.child_by_field_name("right")
        if right is None:
            break
        node = right
    return node


def _either(left: Expr | None, right: Expr | None) -> Expr | None:
    if left is None or right is None:
        return left or right
    return Either((left, right))

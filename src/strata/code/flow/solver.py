"""Flow-insensitive value propagation over every file of a repository.

Abstract values are tuples: ``("f", path, qualname)`` a function or method
object, ``("b", ...)`` a method bound to its receiver, ``("c", ...)`` a class,
``("i", ...)`` an instance of a repository class, ``("m", name, paths)`` a
module of the repository, ``("x", path, n)`` a container literal. Variables are
locals and parameters ``("v", path, scope, name)``, attributes of a class and
its instances ``("a", path, class, name)``, returns ``("r", path, qualname)``
and container elements ``("e", box)``. Every statement is applied each round
until nothing changes or :data:`MAX_ROUNDS` is reached; a variable holding more
than :data:`MAX_VALUES` values is *wide* and answers nothing (too vague to
trust), so the pass stays bounded on any repository.
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Protocol as TypingProtocol

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
    Item,
    Name,
    Param,
    Protocol,
    Super,
)
from strata.code.flow.mro import linearize
from strata.code.model import SymbolDef
from strata.code.modules import FileScope, ModuleIndex, ModuleTarget, SymbolTarget

MAX_ROUNDS = 8
MAX_VALUES = 16
MAX_DEPTH = 16
Value = tuple[object, ...]
Var = tuple[object, ...]
_TYPE_NAME = re.compile(r"[A-Za-z_][\w.]*")
_TYPE_WRAPPERS = frozenset({"Optional", "Union", "Final", "ClassVar", "Annotated", "None"})
_CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum"})


class _HitLike(TypingProtocol):
    @property
    def target(self) -> SymbolTarget: ...


class Lookup(TypingProtocol):
    """What the solver asks of the resolver: names, members and bases."""

    index: ModuleIndex
    symbols: dict[tuple[str, str], SymbolDef]

    def scope(self, path: str) -> FileScope: ...

    def lookup_name(self, path: str, name: str, caller: str | None) -> _HitLike | None: ...

    def member(self, owner: SymbolTarget, name: str, depth: int = 0) -> _HitLike | None: ...

    def bases(self, owner: SymbolTarget) -> list[SymbolTarget]: ...


class Solver:
    """Points-to sets of every variable of the repository after :meth:`solve`."""

    def __init__(self, lookup: Lookup, flows: dict[str, FileFlow]) -> None:
        self.lookup = lookup
        self.flows = flows
        self.env: dict[Var, set[Value]] = defaultdict(set)
        self.wide: set[Var] = set()
        self.functions: dict[tuple[str, str], Function] = {}
        self.locals: dict[tuple[str, str | None], set[str]] = defaultdict(set)
        self.evaluations = 0
        self.sites: dict[int, tuple[set[Value], bool]] = {}  # id(FlowCall) -> callees, known
        self._boxes: dict[int, Value] = {}
        # Worklist propagation: a statement is re-run only when a variable it read grew.
        self._statements: list[tuple[str, str, object, object]] = []
        self._readers: dict[Var, set[int]] = defaultdict(set)
        self._queued: set[int] = set()
        self._queue: list[int] = []
        self._current = -1
        self._current_path = ""
        # file -> files whose statements or variables its values came from
        self.file_deps: dict[str, set[str]] = defaultdict(set)
        # Static lookups (declarations, members, bases never change while solving).
        self._vars: dict[tuple[str, str | None, str], Var] = {}
        self._declared_cache: dict[tuple[str, str | None, str], set[Value]] = {}
        self._members: dict[tuple[str, str, str], tuple[str, str] | None] = {}
        self._mros: dict[tuple[str, str], list[SymbolTarget]] = {}
        self._annotations: dict[tuple[str, str | None, str], set[Value]] = {}
        self._names = {symbol.name for symbol in lookup.symbols.values()}
        self._sites_of: dict[tuple[str, str, str], list[tuple[int, int, Var]]] = defaultdict(list)
        for path, flow in flows.items():
            for function in flow.functions:
                self.functions[(path, function.qualname)] = function
                names = self.locals[(path, function.qualname)]
                names.update(p.name for p in function.params)
            for assign in flow.assigns:
                if isinstance(assign.target, Name):
                    self.locals[(path, assign.scope)].add(assign.target.id)
                    if assign.scope is not None and assign.line:
                        site = (assign.line, assign.block, ("s", path, id(assign)))
                        self._sites_of[(path, assign.scope, assign.target.id)].append(site)

    # -- propagation -------------------------------------------------------------------

    def solve(self) -> int:
        """Propagate to a fixpoint (or the evaluation cap); returns the statements run."""
        collecting = gc.isenabled()
        gc.disable()  # millions of small tuples, no cycles: generational scans only cost
        try:
            return self._solve()
        finally:
            self._current = -1
            if collecting:
                gc.enable()

    def _solve(self) -> int:
        self._seed()
        statements = self._statements
        for path, flow in self.flows.items():
            for function in flow.functions:
                statements += [("r", path, function, e) for e in function.returns]
                statements += [("d", path, function, p) for p in function.params if p.default]
                statements += [("k", path, function, d) for d in function.decorators]
            statements += [("a", path, a, None) for a in flow.assigns]
            statements += [("c", path, c, None) for c in flow.calls]
        self._queue = list(range(len(statements)))
        self._queue.reverse()
        self._queued = set(self._queue)
        budget = MAX_ROUNDS * len(statements)
        while self._queue and self.evaluations < budget:
            index = self._queue.pop()
            self._queued.discard(index)
            self._current = index
            self._current_path = statements[index][1]
            self.evaluations += 1
            self._apply(*statements[index])
        return self.evaluations

    def _apply(self, kind: str, path: str, item: object, extra: object) -> None:
        if kind == "a":
            assert isinstance(item, Assign)
            at = (item.line, item.block) if item.line else None
            values = self.eval(path, item.scope, item.value, at=at)
            if values:
                for var in self._targets(path, item.scope, item.target):
                    self._add(var, values)
                if isinstance(item.target, Name):
                    self._add(("s", path, id(item)), values)
        elif kind == "c":
            assert isinstance(item, FlowCall)
            self._call(path, item)
        else:
            assert isinstance(item, Function)
            symbol = self.lookup.symbols.get((path, item.qualname))
            parent = symbol.parent if symbol is not None else None
            if kind == "r":
                self._add(("r", path, item.qualname), self.eval(path, item.qualname, extra))  # type: ignore[arg-type]
            elif kind == "d":
                if not isinstance(extra, Param) or extra.default is None:
                    return
                var = ("v", path, item.qualname, extra.name)
                self._add(var, self.eval(path, parent, extra.default))
            else:
                # A repository decorator receives the function as its first argument.
                for value in self.eval(path, parent, extra):  # type: ignore[arg-type]
                    if value[0] == "f":
                        self._bind_args(value, [{("f", path, item.qualname)}], (), skip=0)

    def decorators(self, path: str, qualname: str) -> list[Value]:
        """The repository functions applied as decorators to a function (innermost last)."""
        function = self.functions.get((path, qualname))
        symbol = self.lookup.symbols.get((path, qualname))
        if function is None or symbol is None:
            return []
        found: list[Value] = []
        for decorator in function.decorators:
            found += [v for v in self.eval(path, symbol.parent, decorator) if v[0] == "f"]
        return found

    def _seed(self) -> None:
        for (path, qualname), function in self.functions.items():
            symbol = self.lookup.symbols.get((path, qualname))
            if symbol is None:
                continue
            enclosing = symbol.parent
            owner = self.lookup.symbols.get((path, enclosing)) if enclosing else None
            params = function.params
            decorators = set(symbol.decorators)
            in_class = owner is not None and owner.kind in _CLASS_KINDS
            if in_class and params and "staticmethod" not in decorators:
                kind = "c" if "classmethod" in decorators else "i"
                self._add(("v", path, qualname, params[0].name), [(kind, path, enclosing)])
                params = params[1:]
            for param in params:
                var = ("v", path, qualname, param.name)
                if param.annotation:
                    self._add(var, self._annotation(path, enclosing, param.annotation))
            if function.annotation:
                self._add(
                    ("r", path, qualname), self._annotation(path, enclosing, function.annotation)
                )

    def _call(self, path: str, call: FlowCall) -> None:
        func = call.func
        at = (call.line, call.block)
        if isinstance(func, Attr):
            receiver = self.eval(path, call.scope, func.obj, at=at)
            callees: set[Value] = set()
            for value in receiver:
                callees |= self.attribute(value, func.name)
            known = bool(receiver)
        else:
            callees = self.eval(path, call.scope, func, at=at)
            known = isinstance(func, Item)  # an element is never the container's name
        # The last run of a call sees its inputs' final values (growth re-queues it).
        self.sites[id(call)] = (callees, known)
        if not callees:
            return
        args = [
            self.eval(path, call.scope, a, at=at) if a is not None else set() for a in call.args
        ]
        keywords = tuple((k, self.eval(path, call.scope, v, at=at)) for k, v in call.keywords)
        for callee in callees:
            if callee[0] in ("f", "b"):
                self._bind_args(callee, args, keywords, skip=1 if callee[0] == "b" else 0)
            elif callee[0] == "c":
                init = self.member(str(callee[1]), str(callee[2]), "__init__")
                if init is not None:
                    self._bind_args(("f", *init), args, keywords, skip=1)

    def _bind_args(
        self,
        callee: Value,
        args: list[set[Value]],
        keywords: tuple[tuple[str, set[Value]], ...],
        *,
        skip: int,
    ) -> None:
        path, qualname = str(callee[1]), str(callee[2])
        function = self.functions.get((path, qualname))
        if function is None:
            return
        params = function.params[skip:]
        positional = [p for p in params if p.kind == "pos"]
        for param, arg in zip(positional, args, strict=False):
            self._add(("v", path, qualname, param.name), arg)
        by_name = {p.name for p in params if p.kind in ("pos", "kw")}
        for key, values in keywords:
            if key in by_name:
                self._add(("v", path, qualname, key), values)

    def _targets(self, path: str, scope: str | None, target: Expr) -> Iterator[Var]:
        if isinstance(target, Name):
            yield self._var(path, scope, target.id)
        elif isinstance(target, Attr):
            for value in self.eval(path, scope, target.obj):
                if value[0] in ("i", "c"):
                    yield ("a", value[1], value[2], target.name)
                elif value[0] == "m" and value[2]:
                    yield ("v", value[2][0], None, target.name)  # type: ignore[index]
        elif isinstance(target, Item):
            for value in self.eval(path, scope, target.obj):
                if value[0] == "x":
                    yield ("e", value)

    def _add(self, var: Var, values: Iterable[Value]) -> None:
        if var in self.wide:
            return
        if self._current >= 0 and var[1] != self._current_path:
            self.file_deps[str(var[1])].add(self._current_path)
        known = self.env[var]
        before = len(known)
        known.update(values)
        if len(known) == before:
            return
        if len(known) > MAX_VALUES:
            self.wide.add(var)
            known.clear()
        for reader in self._readers.get(var, ()):
            if reader not in self._queued:
                self._queued.add(reader)
                self._queue.append(reader)

    def values(self, var: Var) -> set[Value]:
        """What ``var`` holds (empty when unknown or too wide); notes who read it."""
        if self._current >= 0:
            self._readers[var].add(self._current)
            if var[1] != self._current_path:
                self.file_deps[self._current_path].add(str(var[1]))
        if var in self.wide:
            return set()
        return self.env.get(var) or set()

    # -- evaluation --------------------------------------------------------------------

    def _var(self, path: str, scope: str | None, name: str) -> Var:
        key = (path, scope, name)
        found = self._vars.get(key)
        if found is None:
            found = self._vars[key] = self._find_var(path, scope, name)
        return found

    def _find_var(self, path: str, scope: str | None, name: str) -> Var:
        """The variable a name denotes in ``scope``: its own local, an enclosing
        function's, a class attribute (in a class body), or the module global."""
        current = scope
        while current is not None:
            symbol = self.lookup.symbols.get((path, current))
            function = self.functions.get((path, current))
            if function is not None and name in function.globals:
                break
            if symbol is not None and symbol.kind in _CLASS_KINDS:
                if current == scope:
                    return ("a", path, current, name)
            elif name in self.locals.get((path, current), ()):
                return ("v", path, current, name)
            current = symbol.parent if symbol is not None else None
        return ("v", path, None, name)

    def eval(
        self,
        path: str,
        scope: str | None,
        expr: Expr,
        depth: int = 0,
        at: tuple[int, int] | None = None,
    ) -> set[Value]:
        """The values ``expr`` may have in ``scope`` of ``path`` (empty: unknown); ``at``
        (line, block) of the reading statement lets straight-line reassignment decide."""
        if depth > MAX_DEPTH:
            return set()
        if isinstance(expr, Name):
            var = self._var(path, scope, expr.id)
            reaching = self._reaching(path, scope, expr.id, at) if at and var[2] == scope else None
            found = set(self.values(var)) if reaching is None else set()
            for site in reaching or ():
                found |= self.values(site)
            if (var[0] == "v" and var[2] is None) or not found:
                found |= self._declared(path, scope, expr.id)
            return found
        if isinstance(expr, Container):
            box = self._boxes.setdefault(id(expr), ("x", path, id(expr)))
            for item in expr.items:
                self._add(("e", box), self.eval(path, scope, item, depth + 1, at))
            return {box}
        if isinstance(expr, Either):
            out: set[Value] = set()
            for option in expr.options:
                out |= self.eval(path, scope, option, depth + 1, at)
            return out
        if isinstance(expr, Annot):
            return set(self._annotation(path, scope, expr.text))
        if isinstance(expr, Super):
            return self._super(path, scope)
        return self._derived(path, scope, expr, depth, at)

    def _derived(
        self, path: str, scope: str | None, expr: Expr, depth: int, at: tuple[int, int] | None
    ) -> set[Value]:
        """Values computed from the values of one inner expression."""
        out: set[Value] = set()
        if isinstance(expr, Attr):
            for value in self.eval(path, scope, expr.obj, depth + 1, at):
                out |= self.attribute(value, expr.name)
        elif isinstance(expr, Call):
            for value in self.eval(path, scope, expr.func, depth + 1, at):
                out |= self.called(value)
        elif isinstance(expr, Item):
            for value in self.eval(path, scope, expr.obj, depth + 1, at):
                if value[0] == "x":
                    out |= self.values(("e", value))
        elif isinstance(expr, Protocol):
            for value in self.eval(path, scope, expr.obj, depth + 1, at):
                if value[0] == "i":
                    for method in self.attribute(value, expr.method):
                        out |= self.called(method)
        return out

    def _reaching(
        self, path: str, scope: str | None, name: str, at: tuple[int, int]
    ) -> list[Var] | None:
        """The assignments of a local that reach a read at ``at``, when an earlier one in
        the same block overwrites what came before (None: every assignment may reach)."""
        if scope is None:
            return None
        sites = self._sites_of.get((path, scope, name))
        if not sites:
            return None
        line, block = at
        last = max((s[0] for s in sites if s[1] == block and s[0] < line), default=0)
        if not last:
            return None
        return [s[2] for s in sites if (s[0] == last and s[1] == block) or last < s[0] < line]

    def _declared(self, path: str, scope: str | None, name: str) -> set[Value]:
        key = (path, scope, name)
        found = self._declared_cache.get(key)
        if found is None:
            found = self._declared_cache[key] = self._find_declared(path, scope, name)
        return found

    def _find_declared(self, path: str, scope: str | None, name: str) -> set[Value]:
        scope_of_file = self.lookup.scope(path)
        bindings = scope_of_file.bindings
        if name not in self._names and name not in bindings and not scope_of_file.wildcards:
            return set()
        hit = self.lookup.lookup_name(path, name, scope)
        if hit is not None:
            return {self._symbol_value(hit.target)}
        bound = bindings.get(name)
        if isinstance(bound, ModuleTarget) and bound.paths:
            return {("m", bound.name, bound.paths)}
        return set()

    def _symbol_value(self, target: SymbolTarget) -> Value:
        symbol = self.lookup.symbols.get((target.path, target.qualname))
        kind = "c" if symbol is not None and symbol.kind in _CLASS_KINDS else "f"
        return (kind, target.path, target.qualname)

    def called(self, value: Value) -> set[Value]:
        """What calling ``value`` returns."""
        if value[0] in ("f", "b"):
            return set(self.values(("r", value[1], value[2])))
        if value[0] == "c":
            return {("i", value[1], value[2])}
        return set()

    def attribute(self, value: Value, name: str) -> set[Value]:
        """``value.name``: a member through the class's bases, an attribute, a module's name."""
        kind = value[0]
        if kind in ("i", "c"):
            path, qualname = str(value[1]), str(value[2])
            out: set[Value] = set()
            for owner in self.mro(path, qualname):
                out |= self.values(("a", owner.path, owner.qualname, name))
            found = self.member(path, qualname, name)
            if found is not None:
                symbol = self.lookup.symbols[found]
                decorators = symbol.decorators
                if symbol.kind in _CLASS_KINDS:
                    out.add(("c", *found))
                elif any(d.endswith("property") for d in decorators):
                    out |= self.values(("r", *found))
                elif "staticmethod" in decorators or (
                    kind == "c" and "classmethod" not in decorators
                ):
                    out.add(("f", *found))
                else:
                    out.add(("b", *found))
            return out
        if kind == "m":
            return self._module_attribute(str(value[1]), value[2], name)  # type: ignore[arg-type]
        return set()

    def _module_attribute(self, module: str, paths: tuple[str, ...], name: str) -> set[Value]:
        index = self.lookup.index
        out: set[Value] = set()
        for path in paths:
            symbol = index.top_level.get(path, {}).get(name)
            if symbol is not None:
                out.add(self._symbol_value(SymbolTarget(path, symbol.qualname)))
                continue
            out |= self.values(("v", path, None, name))
            bound = self.lookup.scope(path).bindings.get(name)  # a re-export
            if (
                isinstance(bound, SymbolTarget)
                and (bound.path, bound.qualname) in self.lookup.symbols
            ):
                out.add(self._symbol_value(bound))
            elif isinstance(bound, ModuleTarget) and bound.paths:
                out.add(("m", bound.name, bound.paths))
        if not out:
            sub = tuple(sorted(index.by_module.get(("python", f"{module}.{name}"), ())))
            if sub:
                out.add(("m", f"{module}.{name}", sub))
        return out

    def member(self, path: str, qualname: str, name: str) -> tuple[str, str] | None:
        """The member ``name`` of a class: the first class in its MRO that defines it."""
        key = (path, qualname, name)
        if key not in self._members:
            found = None
            for cls in self.mro(path, qualname):
                if (cls.path, f"{cls.qualname}.{name}") in self.lookup.symbols:
                    found = (cls.path, f"{cls.qualname}.{name}")
                    break
            self._members[key] = found
        return self._members[key]

    def mro(self, path: str, qualname: str) -> list[SymbolTarget]:
        """The class and its bases in C3 order (cached)."""
        found = self._mros.get((path, qualname))
        if found is None:
            found = linearize(SymbolTarget(path, qualname), self.lookup.bases)
            self._mros[(path, qualname)] = found
        return found

    def _super(self, path: str, scope: str | None) -> set[Value]:
        current = scope
        while current is not None:
            symbol = self.lookup.symbols.get((path, current))
            if symbol is None:
                return set()
            if symbol.kind in _CLASS_KINDS:
                return {
                    ("i", b.path, b.qualname)
                    for b in self.lookup.bases(SymbolTarget(path, current))
                }
            current = symbol.parent
        return set()

    def _annotation(self, path: str, scope: str | None, text: str) -> set[Value]:
        """Instances of the repository classes an annotation names (``type[C]``: the class)."""
        key = (path, scope, text)
        found = self._annotations.get(key)
        if found is None:
            found = self._annotations[key] = self._find_annotation(path, scope, text)
        return found

    def _find_annotation(self, path: str, scope: str | None, text: str) -> set[Value]:
        cleaned = text.replace('"', " ").replace("'", " ")
        as_class = cleaned.strip().startswith(("type[", "Type["))
        out: set[Value] = set()
        for dotted in _TYPE_NAME.findall(cleaned):
            if dotted.rsplit(".", 1)[-1] in _TYPE_WRAPPERS:
                continue
            head, *rest = dotted.split(".")
            expr: Expr = Name(head)
            for part in rest:
                expr = Attr(expr, part)
            for value in self.eval(path, scope, expr, MAX_DEPTH - 4):
                if value[0] == "c":
                    out.add(value if as_class else ("i", value[1], value[2]))
        return out

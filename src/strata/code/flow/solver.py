"""Flow-insensitive value propagation over every file of a repository.

Every statement (assignment, call, return, default, decorator) runs once, and
again only when a variable it read grew (a worklist), until nothing changes or
:data:`MAX_ROUNDS` times the statement count is spent, so the pass stays
bounded on any repository. Within one block a local's last earlier assignment
decides what a read sees (straight-line order); across blocks values join.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Iterator
from collections.abc import Set as AbstractSet

from strata.code.flow.bags import Bag
from strata.code.flow.fixtures import Fixtures, Target
from strata.code.flow.model import (
    Assign,
    Attr,
    Expr,
    FileFlow,
    FlowCall,
    Function,
    Item,
    Name,
    Param,
)
from strata.code.flow.statements import StatementIndex
from strata.code.flow.values import CLASS_KINDS, Evaluator, Lookup, Value, Var, ordered
from strata.code.modules import SymbolTarget

MAX_ROUNDS = 8
# A call site's answer when it has no callees, by whether its receiver is known.
NO_CALLEES: dict[bool, tuple[AbstractSet[Value], bool]] = {
    False: (frozenset(), False),
    True: (frozenset(), True),
}
__all__ = ["MAX_ROUNDS", "Lookup", "Solver", "Value", "Var"]


class Solver(Evaluator):
    """Points-to sets of every variable of the repository after :meth:`solve`."""

    def __init__(
        self,
        lookup: Lookup,
        flows: dict[str, FileFlow],
        statements: StatementIndex | None = None,
    ) -> None:
        self.lookup = lookup
        self.flows = flows
        self.env: dict[Var, set[Value]] = defaultdict(set)
        self.wide: set[Var] = set()
        self.evaluations = 0
        # id(FlowCall) -> callees, known (an empty answer is one shared object: most are)
        self.sites: dict[int, tuple[AbstractSet[Value], bool]] = {}
        self._boxes: dict[int, tuple[Value, Expr]] = {}
        self._boxes_made = 0
        # Worklist propagation: a statement is re-run only when a variable it read grew.
        self._statements: list[tuple[str, str, object, object]] = []
        self._readers: dict[Var, Bag[int]] = {}  # who read each variable
        self._queued: set[int] = set()
        self._queue: list[int] = []
        self._current = -1
        self._current_path = ""
        # file -> files whose statements or variables its values came from
        self.file_deps: dict[str, set[str]] = defaultdict(set)
        # Static lookups (declarations, members, bases never change while solving).
        self._vars: dict[tuple[str, str | None, str], Var] = {}
        self._declared_cache: dict[tuple[str, str | None, str], tuple[Value, ...]] = {}
        self._members: dict[tuple[str, str, str], tuple[str, str] | None] = {}
        self._mros: dict[tuple[str, str], list[SymbolTarget]] = {}
        self._annotations: dict[tuple[str, str | None, str], set[Value]] = {}
        self._names = lookup.symbol_names
        self.fixtures = Fixtures(lookup.index.files, flows)
        # Functions, locals and writers per file: kept by the caller between runs (a push
        # re-reads its changed files only), else read here from every flow.
        self.statements = statements if statements is not None else StatementIndex()
        self.functions = self.statements.functions
        self.locals = self.statements.locals
        self._sites_of = self.statements.sites_of
        self.refreshed = self.statements.refresh(lookup.index.files, flows, self._var)

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
                statements += [("y", path, function, e) for e in yields_of(function)]
                filled = self.fixtures.params(path, function)
                statements += [("p", path, function, f) for f in filled]
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
        elif kind in ("r", "y"):  # what the function returns / yields
            assert isinstance(item, Function)
            self._add((kind, path, item.qualname), self.eval(path, item.qualname, extra))  # type: ignore[arg-type]
        elif kind == "p":
            assert isinstance(item, Function)
            self._fill(path, item, extra)  # type: ignore[arg-type]
        else:
            assert isinstance(item, Function)
            self._around(kind, path, item, extra)

    def _around(self, kind: str, path: str, item: Function, extra: object) -> None:
        """A default (``d``) or a decorator (``k``): evaluated where the function is defined."""
        symbol = self.lookup.symbols.get((path, item.qualname))
        parent = symbol.parent if symbol is not None else None
        if kind == "d":
            if not isinstance(extra, Param) or extra.default is None:
                return
            var = ("v", path, item.qualname, extra.name)
            self._add(var, self.eval(path, parent, extra.default))
        else:
            # A repository decorator receives the function as its first argument.
            for value in ordered(self.eval(path, parent, extra)):  # type: ignore[arg-type]
                if value[0] == "f":
                    self._bind_args(value, [{("f", path, item.qualname)}], (), skip=0)

    def _fill(self, path: str, function: Function, filled: tuple[Param, Target]) -> None:
        """A test's parameter receives what its pytest fixture returns or yields."""
        param, (where, fixture) = filled
        values = self.values(("r", where, fixture)) | self.values(("y", where, fixture))
        self._add(("v", path, function.qualname, param.name), values)

    def decorators(self, path: str, qualname: str) -> list[Value]:
        """The repository functions applied as decorators to a function (innermost last)."""
        function = self.functions.get((path, qualname))
        symbol = self.lookup.symbols.get((path, qualname))
        if function is None or symbol is None:
            return []
        found: list[Value] = []
        for decorator in function.decorators:
            found += [v for v in ordered(self.eval(path, symbol.parent, decorator)) if v[0] == "f"]
        return found

    def _seed(self) -> None:
        for (path, qualname), function in self.functions.items():
            for var, values in self._function_seeds(path, qualname, function):
                self._add(var, values)

    def _function_seeds(
        self, path: str, qualname: str, function: Function
    ) -> Iterator[tuple[Var, set[Value]]]:
        """What a function's parameters and return hold before any statement runs:
        ``self``/``cls`` of a method, and the classes annotations name."""
        symbol = self.lookup.symbols.get((path, qualname))
        if symbol is None:
            return
        enclosing = symbol.parent
        owner = self.lookup.symbols.get((path, enclosing)) if enclosing else None
        params = function.params
        decorators = set(symbol.decorators)
        in_class = owner is not None and owner.kind in CLASS_KINDS
        if in_class and params and "staticmethod" not in decorators:
            kind = "c" if "classmethod" in decorators else "i"
            yield ("v", path, qualname, params[0].name), {(kind, path, enclosing)}
            params = params[1:]
        for param in params:
            if param.annotation:
                var = ("v", path, qualname, param.name)
                yield var, self._annotation(path, enclosing, param.annotation)
        if function.annotation:
            yield ("r", path, qualname), self._annotation(path, enclosing, function.annotation)

    def _call(self, path: str, call: FlowCall) -> None:
        func = call.func
        at = (call.line, call.block)
        if isinstance(func, Attr):
            receiver = self.eval(path, call.scope, func.obj, at=at)
            callees: set[Value] = set()
            for value in ordered(receiver):
                callees |= self.attribute(value, func.name)
            known = bool(receiver)
        else:
            callees = self.eval(path, call.scope, func, at=at)
            known = isinstance(func, Item)  # an element is never the container's name
        # The last run of a call sees its inputs' final values (growth re-queues it).
        self.sites[id(call)] = (callees, known) if callees else NO_CALLEES[known]
        if not callees:
            return
        args = [
            self.eval(path, call.scope, a, at=at) if a is not None else set() for a in call.args
        ]
        keywords = tuple((k, self.eval(path, call.scope, v, at=at)) for k, v in call.keywords)
        for callee in ordered(callees):
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
            for value in ordered(self.eval(path, scope, target.obj)):
                if value[0] in ("i", "c"):
                    yield ("a", value[1], value[2], target.name)
                elif value[0] == "m" and value[2]:
                    yield ("v", value[2][0], None, target.name)  # type: ignore[index]
        elif isinstance(target, Item):
            for value in ordered(self.eval(path, scope, target.obj)):
                if value[0] == "x":
                    yield ("e", value)


def yields_of(function: Function) -> tuple[Expr, ...]:
    return getattr(function, "yields", ())  # absent on flows cached before yields

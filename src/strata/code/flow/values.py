"""Evaluating flow expressions to abstract values, against the solver's variables.

Abstract values are tuples: ``("f", path, qualname)`` a function or method
object, ``("b", ...)`` a method bound to its receiver, ``("c", ...)`` a class,
``("i", ...)`` an instance of a repository class, ``("m", name, paths)`` a
module of the repository, ``("x", path, n)`` the n-th container literal made. Variables are
locals and parameters ``("v", path, scope, name)``, what one assignment of a
local gave ``("s", path, n)``, attributes of a class and its instances
``("a", path, class, name)``, returns ``("r", path, qualname)`` and container
elements ``("e", box)``. A variable holding more than :data:`MAX_VALUES` values
is *wide* and answers nothing (too vague to trust).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any
from typing import Protocol as TypingProtocol

from strata.code.flow.bags import Bag, bag_add, bag_items
from strata.code.flow.model import (
    Annot,
    Attr,
    Call,
    Container,
    Either,
    Expr,
    Function,
    Item,
    Name,
    Protocol,
    Super,
)
from strata.code.flow.mro import linearize
from strata.code.model import SymbolDef
from strata.code.modules import Binding, FileScope, ModuleIndex, ModuleTarget, SymbolTarget

MAX_VALUES = 16
MAX_DEPTH = 16
Value = tuple[object, ...]
Var = tuple[object, ...]
CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum"})
_TYPE_NAME = re.compile(r"[A-Za-z_][\w.]*")
_TYPE_WRAPPERS = frozenset({"Optional", "Union", "Final", "ClassVar", "Annotated", "None"})


def ordered(values: AbstractSet[Value]) -> Iterable[Value]:
    """``values`` in the same order in every process. A set of tuples of strings
    iterates in an order of the interpreter's string-hash seed, and what a loop over
    values demands first decides some memoised answers (the caps are not monotone):
    unordered, two processes disagreed on 0.1% of sympy's call edges."""
    return values if len(values) < 2 else sorted(values)


def file_of(var: Var) -> str:
    """The file a variable belongs to (a container element: the literal's file)."""
    owner = var[1]
    return str(owner[1]) if isinstance(owner, tuple) else str(owner)


class _HitLike(TypingProtocol):
    @property
    def target(self) -> SymbolTarget: ...


class Lookup(TypingProtocol):
    """What the solver asks of the resolver: names, members and bases."""

    index: ModuleIndex
    symbols: dict[tuple[str, str], SymbolDef]
    symbol_names: Mapping[str, int]  # how many declarations have each name

    def scope(self, path: str) -> FileScope: ...

    def lookup_name(self, path: str, name: str, caller: str | None) -> _HitLike | None: ...

    def binding(self, path: str, name: str, caller: str | None) -> Binding | None: ...

    def member(self, owner: SymbolTarget, name: str, depth: int = 0) -> _HitLike | None: ...

    def bases(self, owner: SymbolTarget) -> list[SymbolTarget]: ...


class Evaluator:
    """Variables, their values and the evaluation of expressions; :class:`Solver`
    (``strata.code.flow.solver``) adds the propagation that fills them."""

    lookup: Lookup
    env: dict[Var, set[Value]]
    wide: set[Var]
    functions: dict[tuple[str, str], Function]
    locals: dict[tuple[str, str | None], set[str]]
    file_deps: dict[str, set[str]]
    _boxes: dict[int, tuple[Value, Expr]]  # id(literal) -> its box, and the literal (held:
    # its id is not reused while the box is known, by a kept solver either)
    _boxes_made: int  # numbers the boxes in the order they are made (not by address)
    _readers: dict[Var, Bag[int]]
    _queued: set[int]
    _queue: list[int]
    _current: int
    _current_path: str
    _vars: dict[tuple[str, str | None, str], Var]
    _declared_cache: dict[tuple[str, str | None, str], tuple[Value, ...]]
    _members: dict[tuple[str, str, str], tuple[str, str] | None]
    _mros: dict[tuple[str, str], list[SymbolTarget]]
    _annotations: dict[tuple[str, str | None, str], set[Value]]
    _names: Mapping[str, int]  # the lookup's, kept current by it
    _sites_of: dict[tuple[str, str, str], Sequence[tuple[int, int, Var]]]

    def _add(self, var: Var, values: Iterable[Value]) -> None:
        if var in self.wide:
            return
        where = file_of(var)
        if self._current >= 0 and where != self._current_path and self._current_path:
            self.file_deps[where].add(self._current_path)
        known = self.env[var]
        before = len(known)
        known.update(values)
        if len(known) == before:
            return
        if len(known) > MAX_VALUES:
            self.wide.add(var)
            known.clear()
        for reader in bag_items(self._readers.get(var)):
            if reader not in self._queued:
                self._queued.add(reader)
                self._queue.append(reader)

    def values(self, var: Var) -> set[Value]:
        """What ``var`` holds (empty when unknown or too wide); notes who read it."""
        if self._current >= 0:
            bag_add(self._readers, var, self._current)
            where = file_of(var)
            if where != self._current_path:
                self.file_deps[self._current_path].add(where)
        if var in self.wide:
            return set()
        return self.env.get(var) or set()

    def _new_box(self, path: str, expr: Expr) -> Value:
        # Numbered in creation order, which is the same in every process (an address
        # is not: sorted boxes of one file came in another order in another process).
        self._boxes_made += 1
        box = ("x", path, self._boxes_made)
        self._boxes[id(expr)] = (box, expr)
        return box

    def _var(self, path: str, scope: str | None, name: str) -> Var:
        key = (path, scope, name)
        found = self._vars.get(key)
        if found is None:
            found = self._vars[key] = self._find_var(path, scope, name)
            self._cached(path, self._vars, key)
        return found

    def _cached(self, path: str, table: dict[Any, Any], key: Any) -> None:
        """A static lookup of ``path`` was computed and put in ``table`` under ``key``
        (the demand solver notes it, to drop it when the file changes)."""

    def _find_var(self, path: str, scope: str | None, name: str) -> Var:
        """The variable a name denotes in ``scope``: its own local, an enclosing
        function's, a class attribute (in a class body), or the module global."""
        current = scope
        while current is not None:
            symbol = self.lookup.symbols.get((path, current))
            function = self.functions.get((path, current))
            if function is not None and name in function.globals:
                break
            if symbol is not None and symbol.kind in CLASS_KINDS:
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
                found.update(self._declared(path, scope, expr.id))
            return found
        if isinstance(expr, Container):
            held = self._boxes.get(id(expr))
            box = held[0] if held is not None else self._new_box(path, expr)
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
            for value in ordered(self.eval(path, scope, expr.obj, depth + 1, at)):
                out |= self.attribute(value, expr.name)
        elif isinstance(expr, Call):
            for value in ordered(self.eval(path, scope, expr.func, depth + 1, at)):
                out |= self.called(value)
        elif isinstance(expr, Item):
            for value in ordered(self.eval(path, scope, expr.obj, depth + 1, at)):
                if value[0] == "x":
                    out |= self.values(("e", value))
        elif isinstance(expr, Protocol):
            for value in ordered(self.eval(path, scope, expr.obj, depth + 1, at)):
                if value[0] == "i":
                    for method in ordered(self.attribute(value, expr.method)):
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

    def _declared(self, path: str, scope: str | None, name: str) -> tuple[Value, ...]:
        """What ``name`` is declared as in ``scope`` (a symbol or a module; at most one:
        a tuple, not a set, ~60k cached on Django)."""
        key = (path, scope, name)
        found = self._declared_cache.get(key)
        if found is None:
            found = self._declared_cache[key] = self._find_declared(path, scope, name)
            self._cached(path, self._declared_cache, key)
        return found

    def _find_declared(self, path: str, scope: str | None, name: str) -> tuple[Value, ...]:
        scope_of_file = self.lookup.scope(path)
        bound = self.lookup.binding(path, name, scope)
        if name not in self._names and bound is None and not scope_of_file.wildcards:
            return ()
        hit = self.lookup.lookup_name(path, name, scope)
        if hit is not None:
            return (self._symbol_value(hit.target),)
        if isinstance(bound, ModuleTarget) and bound.paths:
            return (("m", bound.name, bound.paths),)
        return ()

    def _symbol_value(self, target: SymbolTarget) -> Value:
        symbol = self.lookup.symbols.get((target.path, target.qualname))
        kind = "c" if symbol is not None and symbol.kind in CLASS_KINDS else "f"
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
                # The first class in the MRO that assigns the attribute wins, as in Python
                # (a subclass's `storage_class = B` hides the base's `storage_class = A`).
                out |= self.values(("a", owner.path, owner.qualname, name))
                if out:
                    break
            found = self.member(path, qualname, name)
            if found is not None:
                symbol = self.lookup.symbols[found]
                decorators = symbol.decorators
                if symbol.kind in CLASS_KINDS:
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
        key = (path, scope, "super()")
        found = self._annotations.get(key)  # static, like an annotation: cached alike
        if found is None:
            found = self._annotations[key] = self._find_super(path, scope)
            self._cached(path, self._annotations, key)
        return found

    def _find_super(self, path: str, scope: str | None) -> set[Value]:
        current = scope
        while current is not None:
            symbol = self.lookup.symbols.get((path, current))
            if symbol is None:
                return set()
            if symbol.kind in CLASS_KINDS:
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
            self._cached(path, self._annotations, key)
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

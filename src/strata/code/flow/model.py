"""The value-flow IR of one file: what flows where, language-neutral and pickle-able.

An adapter turns a syntax tree into a :class:`FileFlow`; the solver
(:mod:`strata.code.flow.solver`) propagates values over every file of a
repository. Scopes are the qualnames of :class:`~strata.code.model.SymbolDef`
(``None``: file level); a lambda is not a scope, what happens inside it belongs
to the enclosing symbol. Expressions are kept as small trees; anything the IR
cannot express (arithmetic, comprehensions, lambdas as values) is simply absent,
so the solver knows nothing about it rather than something wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

from strata.code.reduction import by_constructor


@dataclass(frozen=True, slots=True)
class Name:
    """A bare name: a local, a parameter, a module global, an import, a declaration."""

    id: str


@dataclass(frozen=True, slots=True)
class Attr:
    """``obj.name``."""

    obj: Expr
    name: str


@dataclass(frozen=True, slots=True)
class Call:
    """What calling ``func`` returns."""

    func: Expr


@dataclass(frozen=True, slots=True)
class Item:
    """An element of ``obj``: ``obj[k]`` or what iterating ``obj`` yields."""

    obj: Expr


@dataclass(frozen=True, slots=True)
class Container:
    """A list, tuple, set or dict literal (for a dict: its values)."""

    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Either:
    """One of several values: ``a or b``, ``a if c else b``."""

    options: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Annot:
    """A type as written in an annotation (``C``, ``Optional[C]``, ``C | None``, ``"C"``)."""

    text: str


@dataclass(frozen=True, slots=True)
class Super:
    """``super()``: the enclosing class's bases, bound to the current instance."""


@dataclass(frozen=True, slots=True)
class Protocol:
    """What an implicit protocol call on ``obj`` returns (``__iter__``/``__next__``,
    ``__enter__``): ``for x in obj`` binds ``x`` to ``Protocol(Protocol(obj, "__iter__"),
    "__next__")`` joined with ``Item(obj)``."""

    obj: Expr
    method: str


Expr = Name | Attr | Call | Item | Container | Either | Annot | Super | Protocol


@dataclass(frozen=True, slots=True)
class Assign:
    """``target <- value`` in ``scope``; a target is a :class:`Name`, an :class:`Attr`
    (``self.x``, ``obj.x``) or an :class:`Item` (``d[k] = v`` adds to ``d``'s elements)."""

    scope: str | None
    target: Expr
    value: Expr
    line: int = 0
    block: int = -1  # start byte of the enclosing block: straight-line order within it


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: str = "pos"  # pos | kw (keyword-only) | star (*args) | dstar (**kwargs)
    annotation: str | None = None
    default: Expr | None = None


@dataclass(frozen=True, slots=True)
class Function:
    """A function or method scope: parameters, returned expressions, decorators."""

    qualname: str
    params: tuple[Param, ...] = ()
    returns: tuple[Expr, ...] = ()
    annotation: str | None = None  # the return annotation as written
    decorators: tuple[Expr, ...] = ()  # innermost last, as written
    globals: tuple[str, ...] = ()  # names declared ``global``/``nonlocal``
    yields: tuple[Expr, ...] = ()  # yielded expressions (a pytest fixture's value)


@dataclass(frozen=True, slots=True)
class FlowCall:
    """A call site: ``line`` and ``callee`` match the :class:`~strata.code.model.CallSite`."""

    scope: str | None
    line: int
    callee: str
    func: Expr
    args: tuple[Expr | None, ...] = ()  # positional; None where the IR has no value
    keywords: tuple[tuple[str, Expr], ...] = ()
    block: int = -1  # start byte of the enclosing block


@dataclass(frozen=True, slots=True)
class Implicit:
    """A protocol call the source does not spell: ``for`` -> ``__iter__``, ``with`` ->
    ``__enter__``/``__exit__``."""

    scope: str | None
    line: int
    obj: Expr
    method: str


@dataclass(frozen=True, slots=True)
class FileFlow:
    """Everything the solver needs from one file."""

    functions: tuple[Function, ...] = ()
    assigns: tuple[Assign, ...] = ()
    calls: tuple[FlowCall, ...] = ()
    implicits: tuple[Implicit, ...] = ()
    # (line, function qualname) of each import statement inside a function: what it
    # binds is visible in that function (and functions nested in it) only.
    local_imports: tuple[tuple[int, str], ...] = ()
    # The names a module-level `__all__ = [...]` lists (None: the file sets no `__all__`).
    exports: tuple[str, ...] | None = None


by_constructor(__name__)

"""What other files' values can see of a file: a kept demand solver's reuse test.

A push that changes function bodies leaves everything another file's lookups
read from the changed file as it was: its declarations (names, kinds, nesting,
bases, decorators), its imports and re-exports, its module-level names, and the
signatures calls bind arguments to. :func:`shape` is that part; when it is
equal before and after, the solver kept from the last run may take the change
in (:meth:`~strata.code.flow.demand.DemandSolver.rebase`) instead of starting
over. Line numbers are not in it: a declaration moving down a file is seen by
no other file's lookup. Free functions may come and go: the solver notes who
looked a name up, and re-runs them.
"""

from __future__ import annotations

from dataclasses import dataclass

from strata.code.flow.fixtures import is_fixture
from strata.code.flow.model import Attr, FileFlow, Function, Item, Name
from strata.code.model import FileExtract

Shape = tuple[object, ...]


@dataclass(frozen=True, slots=True)
class FileShape:
    """``core``: what must not change; ``free``: the free functions (not methods, not
    pytest fixtures) by qualname, with their signatures. A free function may come or
    go (the lookups of its name are re-run), but not change its signature."""

    core: Shape
    free: dict[str, Shape]


def shape(extract: FileExtract | None) -> FileShape | None:
    """The lookup-visible part of ``extract`` (None: no extract or no value flow)."""
    flow = getattr(extract, "flow", None)
    if extract is None or flow is None:
        return None
    free_names = {
        s.qualname for s in extract.symbols if s.kind == "function" and not is_fixture(s.decorators)
    }
    symbols = tuple(
        (s.qualname, s.kind, s.parent, s.bases, s.implements, s.decorators)
        for s in extract.symbols
        if s.qualname not in free_names
    )
    imports = tuple((i.module, i.names, i.alias) for i in extract.imports)
    signatures = {f.qualname: _signature(f) for f in flow.functions}
    free = {q: signatures.pop(q) for q in free_names if q in signatures}
    module_names = sorted(
        {a.target.id for a in flow.assigns if a.scope is None and isinstance(a.target, Name)}
    )
    local_imports = sorted({qualname for _, qualname in flow.local_imports})
    core = (
        extract.language,
        extract.is_test_file,
        extract.package,
        extract.exports,
        symbols,
        imports,
        tuple(sorted(signatures.items())),
        tuple(module_names),
        tuple(local_imports),
        flow.exports,
    )
    return FileShape(core, free)


def moved_names(before: FileShape | None, after: FileShape | None) -> set[str] | None:
    """The names of free functions that came or went, when nothing else of the shape
    changed (None: it did, or a side has no shape)."""
    if before is None or after is None or before.core != after.core:
        return None
    if any(before.free[q] != after.free[q] for q in before.free.keys() & after.free.keys()):
        return None
    return {q.rsplit(".", 1)[-1] for q in before.free.keys() ^ after.free.keys()}


def _signature(function: Function) -> Shape:
    params = tuple((p.name, p.kind, p.annotation, p.default is not None) for p in function.params)
    return (params, function.annotation, function.decorators, function.globals)


def attribute_names(flow: FileFlow | None) -> set[str]:
    """The attribute names the file assigns (``obj.name = ...``)."""
    if flow is None:
        return set()
    return {a.target.name for a in flow.assigns if isinstance(a.target, Attr)}


def assigns_items(flow: FileFlow | None) -> bool:
    """Whether the file assigns container elements (``d[k] = ...``)."""
    return flow is not None and any(isinstance(a.target, Item) for a in flow.assigns)

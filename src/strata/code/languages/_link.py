"""Linking and assembly.

Nesting without walking the tree: declarations and calls are sorted by byte
offset and swept once with a stack of open scopes. That gives every symbol its
enclosing symbol, qualname and parent, and every call its innermost caller;
:func:`build_extract` then freezes the result into the contract's records."""

from __future__ import annotations

import sys
from collections.abc import Iterator

from tree_sitter import Node

from strata.code.languages._text import body_hash, shape_hash
from strata.code.languages._unit import CLASS_LIKE, Decl, RawType, Unit
from strata.code.model import CallSite, DeclaredType, FileExtract, SymbolDef


def link(unit: Unit) -> None:
    """Set qualname, parent and kind of every declaration and caller of every call.

    A declaration without a name (tree-sitter's recovery from a syntax error can
    read ``class {`` or a cut-off method as one) is no declaration: what it holds
    belongs to the named one around it. Kept, it gave symbols an empty name, which
    the ontology refuses, and one such file failed a whole repository's index."""
    named = (d for d in unit.decls if d.name.strip())
    decls = sorted(named, key=lambda d: (d.start, -d.end))
    unit.decls = decls
    seen: dict[str, int] = {}
    stack: list[Decl] = []
    for decl in decls:
        _pop_to(stack, decl)
        enclosing = stack[-1] if stack else None
        decl.enclosing = enclosing
        parent = (
            decl.owner if decl.owner is not None else (enclosing.qualname if enclosing else None)
        )
        if (
            decl.kind == "function"
            and enclosing is not None
            and enclosing.kind in CLASS_LIKE
            and not decl.synthetic
        ):
            decl.kind = "method"
        if parent is None:
            base = decl.name
        else:
            joined = enclosing is not None and enclosing.synthetic and decl.synthetic
            base = f"{parent}{' > ' if joined else '.'}{decl.name}"
        if decl.emit:
            count = seen.get(base, 0) + 1
            seen[base] = count
            decl.qualname = base if count == 1 else f"{base}#{count}"
        else:
            decl.qualname = base
        decl.parent = parent
        stack.append(decl)
    _link_calls(unit, decls)


def _declared_types(unit: Unit) -> tuple[DeclaredType, ...]:
    """Each raw type with the qualname of its scope (one sweep, as for calls)."""
    out: list[DeclaredType] = []
    seen: set[tuple[str | None, str]] = set()
    decls = sorted(unit.decls, key=lambda d: (d.start, -d.end))
    rows = sorted(unit.types, key=lambda t: t.start)
    for raw, stack in zip(rows, _open_scopes(decls, [t.start for t in rows]), strict=True):
        found, scope = _scope_of(stack, raw)
        if not found:
            continue
        key = (scope, raw.name)
        if key not in seen:  # the first declaration of a name wins
            seen.add(key)
            out.append(DeclaredType(scope, raw.name, raw.type, raw.from_call))
    return tuple(out)


def _scope_of(stack: list[Decl], raw: RawType) -> tuple[bool, str | None]:
    """(found, the qualname ``raw`` belongs to); a field outside any class-like symbol
    belongs nowhere."""
    for decl in reversed(stack):
        if raw.member and decl.kind not in CLASS_LIKE:
            continue
        if decl.emit or raw.member:
            return True, decl.qualname
    return not raw.member, None


def _pop_to(stack: list[Decl], decl: Decl) -> None:
    start, end = decl.start, decl.end
    while stack and (stack[-1].end <= start or (stack[-1].start == start and stack[-1].end == end)):
        stack.pop()


def _open_scopes(decls: list[Decl], starts: list[int]) -> Iterator[list[Decl]]:
    """For each of the sorted byte offsets ``starts``, the declarations open there,
    outermost first (one sweep over ``decls``, sorted by start)."""
    stack: list[Decl] = []
    index = 0
    for start in starts:
        while index < len(decls) and decls[index].start <= start:
            _pop_to(stack, decls[index])
            stack.append(decls[index])
            index += 1
        while stack and stack[-1].end <= start:
            stack.pop()
        yield stack


def _link_calls(unit: Unit, decls: list[Decl]) -> None:
    calls = sorted(unit.calls, key=lambda c: c.start)
    unit.calls = calls
    for call, stack in zip(calls, _open_scopes(decls, [c.start for c in calls]), strict=True):
        call.caller = next((d for d in reversed(stack) if d.emit), None)
        if call.receiver is not None:
            owner = next((d for d in reversed(stack) if d.self_name), None)
            if owner is not None and owner.self_name:
                call.receiver = _as_self(call.receiver, owner.self_name)


def _as_self(receiver: str, self_name: str) -> str:
    """``s`` / ``s.db`` read as ``self`` / ``self.db`` inside a method whose receiver is ``s``."""
    if receiver == self_name:
        return "self"
    if receiver.startswith(self_name) and receiver[len(self_name)] in ".[":
        return "self" + receiver[len(self_name) :]
    return receiver


_SPREADS = frozenset({"spread_element", "list_splat", "dictionary_splat", "variadic_argument"})


def _arity(arguments: Node | None) -> int | None:
    """How many arguments a call writes (None: no list, or a spread of unknown length)."""
    if arguments is None:
        return None
    written = [a for a in arguments.named_children if a.type != "comment"]
    return None if any(a.type in _SPREADS for a in written) else len(written)


def build_extract(unit: Unit, language: str, *, has_errors: bool) -> FileExtract:
    """The contract's frozen records for a linked unit."""
    symbols = []
    for d in unit.decls:
        if not d.emit:
            continue
        first = d.first_node()
        start = min(first.start_byte, d.node.start_byte)
        symbols.append(
            SymbolDef(
                qualname=d.qualname,
                name=d.name,
                kind=d.kind,
                line_start=min(first.start_point.row, d.node.start_point.row) + 1,
                line_end=d.node.end_point.row + 1,
                body_hash=body_hash(unit.source[start : d.node.end_byte]),
                shape_hash=shape_hash(unit.source[start : d.node.end_byte], d.name),
                signature=d.signature,
                docstring=d.docstring,
                parent=d.parent,
                bases=tuple(d.bases),
                implements=tuple(d.implements),
                decorators=tuple(d.decorators),
                test_framework=d.test_framework,
                entrypoint=d.entrypoint,
                framework=d.framework,
            )
        )
        unit.frameworks.update(f for f in (d.test_framework, d.framework) if f)
    # Callee texts and names recur call after call (on sympy 670k strings held 210k
    # values): one string per value, which a parse helper's pickle then sends once.
    calls = tuple(
        CallSite(
            caller=c.caller.qualname if c.caller is not None else None,
            callee=sys.intern(c.callee),
            name=sys.intern(c.name),
            receiver=sys.intern(c.receiver) if c.receiver is not None else None,
            line=c.line,
            arity=_arity(c.arguments),
        )
        for c in unit.calls
    )
    source = unit.source
    lines = source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)
    return FileExtract(
        path=unit.path,
        language=language,
        lines=lines,
        symbols=tuple(symbols),
        calls=calls,
        imports=tuple(i for i in unit.imports if i.module),  # a cut-off import names none
        package=unit.package,
        has_errors=has_errors,
        is_test_file=unit.is_test_file,
        frameworks=tuple(sorted(unit.frameworks)),
        entrypoints=tuple(unit.entrypoints),
        types=_declared_types(unit),
        exports=tuple(dict.fromkeys(unit.exports)),
    )

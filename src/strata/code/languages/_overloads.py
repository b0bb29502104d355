"""Overloads are one symbol: typed signatures folded into the declaration they describe.

Python's ``@overload`` stubs and TypeScript's overload signatures are
declarations of the same name in the same scope as the implementation that
follows them. Numbered like repeated qualnames (``name#2``), adding a stub
would move the implementation's id and history to ``name#3``; folded, the
implementation keeps ``name`` whatever stubs come and go, and every call
resolves to it. A group with no implementation (a ``.pyi`` stub file, an
ambient ``declare function``) keeps its first signature as the symbol.
"""

from __future__ import annotations

from collections.abc import Callable

from strata.code.languages._unit import Decl, Unit


def fold_overloads(unit: Unit, is_stub: Callable[[Decl], bool]) -> None:
    """Mark every overload signature of ``unit`` as no symbol of its own (``emit``
    False) when its group has an implementation or an earlier signature.

    Runs before linking: scopes come from byte ranges, groups are (enclosing
    declaration, name).
    """
    stubs = {id(d) for d in unit.decls if d.emit and is_stub(d)}
    if not stubs:
        return
    groups: dict[tuple[int, str], list[Decl]] = {}
    stack: list[Decl] = []
    for decl in sorted(unit.decls, key=lambda d: (d.start, -d.end)):
        while stack and stack[-1].end <= decl.start:
            stack.pop()
        enclosing = id(stack[-1]) if stack else 0
        if decl.emit:
            groups.setdefault((enclosing, decl.name), []).append(decl)
        stack.append(decl)
    for members in groups.values():
        folded = [d for d in members if id(d) in stubs]
        if not folded:
            continue
        implementations = [d for d in members if id(d) not in stubs]
        keep = None if implementations else folded[0]
        for decl in folded:
            if decl is not keep:
                decl.emit = False


def python_stub(decl: Decl) -> bool:
    """A function declared ``@overload`` (``typing.``, ``t.``, ``typing_extensions.``)."""
    return any(d == "overload" or d.endswith(".overload") for d in decl.decorators)

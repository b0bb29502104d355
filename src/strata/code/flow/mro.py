"""Method resolution order: C3 linearization, as Python computes it.

``D(B, C)`` with ``B(A)`` and ``C(A)`` looks up ``D, B, C, A``: a method of
``C`` wins over ``A``'s even though ``B`` comes first. When the bases admit no
C3 order (Python would refuse the class) the depth-first order is used.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T", bound=Hashable)
MAX_CLASSES = 64


def linearize(cls: T, bases: Callable[[T], list[T]]) -> list[T]:
    """The C3 linearization of ``cls`` (``bases``: a class's direct bases, in order)."""
    memo: dict[T, list[T]] = {}
    return _c3(cls, bases, memo, set())


def _c3(cls: T, bases: Callable[[T], list[T]], memo: dict[T, list[T]], active: set[T]) -> list[T]:
    found = memo.get(cls)
    if found is not None:
        return found
    if cls in active or len(active) > MAX_CLASSES:  # a cycle in broken code
        return [cls]
    active.add(cls)
    direct = [b for b in bases(cls) if b != cls]
    sequences = [_c3(b, bases, memo, active) for b in direct] + [direct]
    merged = _merge([list(s) for s in sequences if s])
    active.discard(cls)
    if merged is None:
        merged = _depth_first(direct, bases)
    memo[cls] = result = [cls, *[c for c in merged if c != cls]]
    return result


def _merge(sequences: list[list[T]]) -> list[T] | None:
    out: list[T] = []
    while sequences:
        for sequence in sequences:
            head = sequence[0]
            if not any(head in other[1:] for other in sequences):
                break
        else:
            return None
        out.append(head)
        sequences = [[c for c in s if c != head] for s in sequences]
        sequences = [s for s in sequences if s]
    return out


def _depth_first(direct: list[T], bases: Callable[[T], list[T]]) -> list[T]:
    seen: list[T] = []
    todo = list(direct)
    while todo and len(seen) < MAX_CLASSES:
        current = todo.pop(0)
        if current not in seen:
            seen.append(current)
            todo.extend(bases(current))
    return seen

"""One item, or a set once there are two: the value flow's reverse maps.

The solver notes who read each variable, what each statement wrote and who wrote
each variable. Many keys hold one item (sympy: 64k of 138k readers' entries, 23k
of 62k statements' writes, 64k of 73k variables' writers), and a set costs 216
bytes even for one, where the item itself is already held elsewhere; a set is
made when a second item comes.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeAlias, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T", bound=Hashable)
Bag: TypeAlias = T | set[T]  # never a set as the single item: the items are ints or tuples


def bag_add(table: dict[K, Bag[T]], key: K, item: T) -> None:
    """Add ``item`` to the bag of ``key``."""
    found = table.get(key)
    if found is None:
        table[key] = item
    elif isinstance(found, set):
        found.add(item)
    elif found != item:
        table[key] = {found, item}


def bag_items(found: Bag[T] | None) -> Iterable[T]:
    """The items of a bag (of none: nothing)."""
    if found is None:
        return ()
    if isinstance(found, set):
        return found
    return (found,)

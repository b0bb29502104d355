"""Extract model objects pickle as calls of their constructors.

Frozen slotted dataclasses otherwise unpickle through the ``__setstate__``
dataclasses gives them, which looks their fields up again for every object (a
Django extract set loaded in 29-37 s that way and in 8.5-11.8 s as calls), and
their compiled build (:mod:`strata.code.native`) cannot unpickle that way at all:
its ``__setstate__`` assigns through the frozen ``__setattr__``. Each model module
registers its dataclasses with :mod:`copyreg` when imported, so every pickler and
``copy`` take the same path, compiled or not.
"""

from __future__ import annotations

import copyreg
import dataclasses
import functools
import operator
import sys
from collections.abc import Callable
from typing import Any


def _as_call(obj: Any, fields: Callable[[Any], tuple[Any, ...]]) -> tuple[type, tuple[Any, ...]]:
    return (type(obj), fields(obj))


def _fields_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A C-level reader of an object's fields as a tuple (``attrgetter`` of several
    names answers a tuple; of one name, the bare value)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def by_constructor(module_name: str) -> None:
    """Register every dataclass defined in ``module_name`` to pickle as a constructor call."""
    for value in vars(sys.modules[module_name]).values():
        if (
            isinstance(value, type)
            and dataclasses.is_dataclass(value)
            and value.__module__ == module_name
        ):
            names = tuple(f.name for f in dataclasses.fields(value))
            copyreg.pickle(value, functools.partial(_as_call, fields=_fields_getter(names)))

"""When a call may be linked by its name alone: almost never.

A name-only guess is an invented edge unless the name is rare and really
means one declaration. Names that builtin functions, containers, files and
strings answer to (``values``, ``setdefault``, ``open``, ``next``, ``set``)
mean those far more often than a repository method of the same name; tests,
classes local to a function and properties are never what an unknown
receiver's call reaches.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping

from strata.code.model import SymbolDef

COMMON_METHODS = frozenset(
    {
        "values", "items", "keys", "get", "setdefault", "update", "pop", "popitem",
        "append", "extend", "insert", "remove", "add", "discard", "index", "count",
        "open", "read", "readline", "readlines", "write", "writelines", "close", "flush",
        "seek", "tell", "join", "split", "rsplit", "strip", "lstrip", "rstrip", "format",
        "replace", "startswith", "endswith", "encode", "decode", "lower", "upper",
        "next", "iter", "copy", "clear", "sort", "reverse", "send", "run", "start",
        "stop", "put", "delete", "post", "patch", "head", "call", "apply", "match",
        "search", "find", "load", "loads", "dump", "dumps", "parse", "render", "save",
        "exists", "wait", "acquire", "release", "result", "cancel", "set", "reset",
        "register", "connect", "execute", "fetch", "filter", "exclude", "all", "first",
    }
)  # fmt: skip
BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_"))
GUESS_KINDS = frozenset({"function", "method"})


def never_guessed(name: str, *, bare: bool) -> bool:
    """True for names a name-only guess must not link (``bare``: ``name(...)``)."""
    return name in COMMON_METHODS or (bare and name in BUILTIN_NAMES) or name.startswith("__")


def guessable(
    path: str, symbol: SymbolDef, symbols: Mapping[tuple[str, str], SymbolDef], *, test: bool
) -> bool:
    """Whether a declaration of ``path`` may be the target of a name-only guess
    (``test``: the file is a test file)."""
    if test or symbol.kind not in GUESS_KINDS:
        return False
    if any(d.endswith(("property", ".setter", ".getter", ".deleter")) for d in symbol.decorators):
        return False
    parent = symbol.parent
    while parent:  # a nested function, or a method of a class declared inside a function
        enclosing = symbols.get((path, parent))
        if enclosing is None:
            break
        if enclosing.kind in GUESS_KINDS:
            return False
        parent = enclosing.parent
    return True

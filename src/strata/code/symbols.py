"""The resolver's symbol table: every declaration of a snapshot, kept per file.

Building it reads every symbol of the repository (45k on Django, ~30 ms), and a
push changes a few files. :meth:`SymbolTable.refresh` brings a table to a new
snapshot through the files whose extract is not the object it took in (the
parse of a blob kept in memory between runs is the same object; anything else
is taken out and read again), so a table refreshed push after push holds
exactly what a table built afresh over the same snapshot holds (a name's
callables may be listed in another order: the resolver only counts them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from strata.code.model import FileExtract, SymbolDef
from strata.code.modules import SymbolTarget

CALLABLE_KINDS = frozenset({"function", "method", "class", "struct"})


class SymbolTable:
    """Declarations by (path, qualname), the callable ones by their name, and how
    many declarations have each name (the value flow asks whether any has)."""

    def __init__(self) -> None:
        self.symbols: dict[tuple[str, str], SymbolDef] = {}
        self.names: dict[str, int] = {}
        self.callables: dict[str, list[SymbolTarget]] = defaultdict(list)
        self._files: dict[str, FileExtract] = {}

    def refresh(self, files: Mapping[str, FileExtract]) -> int:
        """Hold exactly ``files``; returns how many files were (re-)read."""
        stale = [path for path, held in self._files.items() if files.get(path) is not held]
        for path in stale:
            self._remove(path, self._files.pop(path))
        added = 0
        for path, extract in files.items():
            if path not in self._files:
                self._add(path, extract)
                added += 1
        return added

    def _add(self, path: str, extract: FileExtract) -> None:
        self._files[path] = extract
        for symbol in extract.symbols:
            key = (path, symbol.qualname)
            self._uncount(self.symbols.get(key))  # a qualname declared twice: the last holds
            self.symbols[key] = symbol
            self.names[symbol.name] = self.names.get(symbol.name, 0) + 1
            if symbol.kind in CALLABLE_KINDS:
                self.callables[symbol.name].append(SymbolTarget(path, symbol.qualname))

    def _remove(self, path: str, extract: FileExtract) -> None:
        for symbol in extract.symbols:
            self._uncount(self.symbols.pop((path, symbol.qualname), None))
            if symbol.kind in CALLABLE_KINDS:
                held = self.callables.get(symbol.name)
                if held is None:
                    continue
                held[:] = [t for t in held if t.path != path]
                if not held:
                    del self.callables[symbol.name]

    def _uncount(self, symbol: SymbolDef | None) -> None:
        if symbol is None:
            return
        left = self.names[symbol.name] - 1
        if left:
            self.names[symbol.name] = left
        else:
            del self.names[symbol.name]

"""Position is not content: where a file's symbols and call sites sit (pure).

Under ontology v4 a symbol's span is not part of its versioned state: the
File version (which changes whenever the file does) carries the *layout* of
the symbols it defines, ``qualname<TAB>line_start<TAB>line_end`` each, and the
*origin* of its file-level code (the first import or file-level call). Call
sites are stored as offsets: from the calling symbol's start (CALLS from a
Symbol, INHERITS, IMPLEMENTS_TYPE, a symbol's ``unresolved_calls``
``callee@+offset``) or from the File's origin (CALLS from a File, IMPORTS).
A line inserted above a symbol therefore changes one fact, the File version,
instead of every symbol and edge below it.

Reads turn offsets back into absolute lines with the layout visible at the
read's moment. Facts written under v1-v3 carry absolute ``line_start`` /
``line_end`` / ``line`` / ``lines`` and ``callee@line``; every function here
falls back to them when the v4 properties are absent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from strata.code.model import FileExtract, SymbolDef
from strata.ontology.model import KEY_SEPARATOR

SEP = "\t"
RELATIVE = "@+"  # "callee@+3": three lines below the calling symbol's start


@dataclass(frozen=True, slots=True)
class Layout:
    """The spans of one File version's symbols and the origin of its file-level code."""

    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    origin: int | None = None

    def span(self, qualname: str | None) -> tuple[int, int] | None:
        return self.spans.get(qualname) if qualname is not None else None

    def base(self, qualname: str | None) -> int | None:
        """Where offsets of a site count from: the symbol's start, or (None) the origin."""
        if qualname is None:
            return self.origin
        span = self.spans.get(qualname)
        return span[0] if span is not None else None


EMPTY = Layout()


def encode_layout(symbols: Iterable[SymbolDef]) -> list[str]:
    """The File's ``layout`` property, in source order (the first of a repeated qualname wins)."""
    return [f"{s.qualname}{SEP}{s.line_start}{SEP}{s.line_end}" for s in symbols]


def decode_layout(entries: Iterable[str] | None, origin: int | None = None) -> Layout:
    spans: dict[str, tuple[int, int]] = {}
    for entry in entries or ():
        qualname, _, rest = str(entry).rpartition(SEP)
        qualname, _, start = qualname.rpartition(SEP)
        if qualname and start.isdigit() and rest.isdigit():
            spans.setdefault(qualname, (int(start), int(rest)))
    return Layout(spans, int(origin) if origin is not None else None)


def origin_of(extract: FileExtract) -> int:
    """The first line of file-level code (imports, calls outside any symbol); 1 when none."""
    lines = [i.line for i in extract.imports] + [c.line for c in extract.calls if c.caller is None]
    return min(lines, default=1)


def starts_of(extract: FileExtract) -> dict[str, int]:
    """Each qualname's start line (the first symbol of a repeated qualname wins)."""
    out: dict[str, int] = {}
    for symbol in extract.symbols:
        out.setdefault(symbol.qualname, symbol.line_start)
    return out


def relative_site(text: str, base: int) -> str:
    """``callee@12`` with base 10 -> ``callee@+2`` (left as written if it has no line)."""
    callee, at, line = text.rpartition("@")
    if not at or not line.isdigit():
        return text
    return f"{callee}{RELATIVE}{int(line) - base}"


def absolute_site(text: str, base: int | None) -> str:
    """``callee@+2`` with base 10 -> ``callee@12``; a v1-v3 ``callee@12`` stays as it is."""
    callee, at, offset = text.rpartition(RELATIVE)
    if not at or base is None or not offset.lstrip("-").isdigit():
        return text
    return f"{callee}@{base + int(offset)}"


def place_symbol(state: Mapping[str, Any], span: tuple[int, int] | None) -> dict[str, Any]:
    """A Symbol state with absolute ``line_start`` / ``line_end`` and ``unresolved_calls``.

    The span comes from the layout visible at the read's moment; a v1-v3 state
    keeps its own span when no layout names the symbol.
    """
    out = dict(state)
    if span is not None:
        out["line_start"], out["line_end"] = span
    start = out.get("line_start")
    sites = out.get("unresolved_calls")
    if sites:
        out["unresolved_calls"] = [
            absolute_site(str(s), int(start) if start is not None else None) for s in sites
        ]
    return out


def absolute_lines(edge: Mapping[str, Any], base: int | None) -> tuple[int, tuple[int, ...]]:
    """A call edge's first line and its lines, absolute: ``base + offset(s)`` for a v4
    edge, its own ``line`` / ``lines`` for a v1-v3 one (0 and () when unknown)."""
    offset = edge.get("offset")
    if offset is not None and base is not None:
        offsets = edge.get("offsets") or [offset]
        return base + int(offset), tuple(base + int(o) for o in offsets)
    line = edge.get("line")
    return int(line or 0), tuple(int(x) for x in edge.get("lines") or ())


def file_key_of(key: str, label: str = "Symbol") -> str:
    """The key of the File that holds a Symbol (a File's own key for a File).

    A Symbol's key is its File's key (repo, ref, path; each part escaped) plus
    its escaped qualname, so cutting the last part gives the File's key.
    """
    return key.rsplit(KEY_SEPARATOR, 1)[0] if label == "Symbol" else key

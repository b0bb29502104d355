"""The pure indexing pipeline over small in-memory programs: parse, index, resolve."""

from __future__ import annotations

from textwrap import dedent

from strata.code.languages import parse_file
from strata.code.modules import ModuleIndex
from strata.code.resolver import Resolver

Edge = tuple[str | None, str, str]


def resolver(files: dict[str, str]) -> Resolver:
    """A resolver over ``files`` (path -> source, dedented)."""
    extracts = {p: parse_file(p, dedent(s).encode()) for p, s in files.items()}
    return Resolver(ModuleIndex(extracts, []))


def edges(files: dict[str, str], path: str | None = None) -> set[Edge]:
    """(caller, callee, resolution) of every call edge of ``path`` (default: every file);
    the callee is ``qualname`` in the same file, else ``path:qualname``."""
    found = resolver(files)
    out: set[Edge] = set()
    for file in [path] if path else list(files):
        for edge in found.resolve_file(file).calls:
            same = edge.dst_path == file
            where = edge.dst_qualname if same else f"{edge.dst_path}:{edge.dst_qualname}"
            out.add((edge.src_qualname, where, edge.resolution))
    return out


def lines(files: dict[str, str], path: str) -> dict[tuple[str | None, str], tuple[int, ...]]:
    """(caller, callee qualname) -> the lines of the calls behind the edge."""
    out = resolver(files).resolve_file(path).calls
    return {(e.src_qualname, e.dst_qualname): e.lines for e in out}


def unresolved(files: dict[str, str], path: str) -> dict[str | None, list[str]]:
    """Calls left unresolved, per caller (``callee@line``)."""
    return resolver(files).resolve_file(path).unresolved

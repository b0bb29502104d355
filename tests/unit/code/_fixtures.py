"""Reading the sample projects under ``tests/fixtures/code/<language>/``."""

from __future__ import annotations

from pathlib import Path

from strata.code.languages import parse_file
from strata.code.model import CallSite, FileExtract, SymbolDef

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "code"


def extract(language: str, relative: str) -> FileExtract:
    """The extract of one fixture file, with its project-relative path."""
    return parse_file(relative, (FIXTURES / language / relative).read_bytes())


def symbol(extract: FileExtract, qualname: str) -> SymbolDef:
    matches = [s for s in extract.symbols if s.qualname == qualname]
    assert len(matches) == 1, f"{qualname}: {[s.qualname for s in extract.symbols]}"
    return matches[0]


def outline(extract: FileExtract) -> list[tuple[str, str, int, int]]:
    """(qualname, kind, line_start, line_end) of every symbol, in source order."""
    return [(s.qualname, s.kind, s.line_start, s.line_end) for s in extract.symbols]


def calls(extract: FileExtract) -> list[tuple[str | None, str, str | None, int]]:
    """(caller, name, receiver, line) of every call, sorted."""
    return sorted(
        ((c.caller, c.name, c.receiver, c.line) for c in extract.calls),
        key=lambda c: (c[3], c[1], c[0] or "", c[2] or ""),
    )


def call_sites(extract: FileExtract, name: str) -> list[CallSite]:
    return [c for c in extract.calls if c.name == name]


def marked_tests(extract: FileExtract) -> dict[str, str]:
    """qualname -> test framework of the symbols marked as tests."""
    return {s.qualname: s.test_framework for s in extract.symbols if s.test_framework}


def entrypoints_of(extract: FileExtract) -> dict[str, tuple[str, str | None]]:
    """qualname -> (entrypoint, framework) of the symbols marked as entrypoints."""
    return {s.qualname: (s.entrypoint, s.framework) for s in extract.symbols if s.entrypoint}

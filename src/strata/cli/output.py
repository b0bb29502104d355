"""How commands print rows: `--format table|json|compact`, readable on a terminal and in a pipe.

One place for the three shapes so that `strata search`, `strata graphql` and
the next command print alike:

- ``compact``: one tab-separated line per row, nothing else on stdout (notes go
  to stderr), for an agent or `cut`/`awk`;
- ``table``: a rich table; on a terminal long cells wrap whole instead of
  ending in "…", in a pipe there is no width limit and no colour;
- ``json``: indented JSON.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Iterable, Sequence
from enum import StrEnum
from typing import Any


class Format(StrEnum):
    """The output shapes a command offers with ``--format``."""

    table = "table"
    json = "json"
    compact = "compact"


def cell(value: Any) -> str:
    """A value as one cell: no tab or newline (they would split a compact row)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    text = str(value)
    return " ".join(text.split()) if any(c in text for c in "\t\r\n") else text


def compact_line(cells: Sequence[Any]) -> str:
    """One row as one tab-separated line."""
    return "\t".join(cell(c) for c in cells)


def print_compact(rows: Iterable[Sequence[Any]]) -> None:
    """Every row on its own tab-separated line on stdout."""
    for row in rows:
        print(compact_line(row))


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def print_table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], *, fold: Collection[str] = ()
) -> None:
    """A table on stdout; the ``fold`` columns wrap whole words on a narrow terminal."""
    from rich.console import Console
    from rich.table import Column, Table

    # Not a terminal: no width limit, so a pipe gets every column whole.
    out = Console() if sys.stdout.isatty() else Console(width=10_000, no_color=True)
    columns = [Column(h, overflow="fold") if h in fold else Column(h) for h in headers]
    table = Table(*columns, box=None)
    for row in rows:
        # markup off: a cell is data, never rich markup ("[x]" stays "[x]").
        table.add_row(*(_plain(cell(c)) for c in row))
    out.print(table)


def _plain(text: str) -> Any:
    from rich.text import Text

    return Text(text)


def note(message: str) -> None:
    """A remark for the reader on stderr (never mixed into the rows on stdout)."""
    print(f"note: {message}", file=sys.stderr)

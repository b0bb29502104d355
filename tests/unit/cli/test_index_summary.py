"""The summary `strata index` prints is readable on an 80-column terminal."""

from __future__ import annotations

from rich.console import Console

from strata.cli.code import NARROW_COLUMNS, SUMMARY_COLUMNS, summary_table
from strata.code.result import IndexResult


def _result(commit: str, files: int) -> IndexResult:
    return IndexResult(
        repo="django",
        ref="main",
        commit=commit,
        base=None,
        mode="full",
        files_total=files,
        files_parsed=files,
        files_written=files,
        lines=493_608,
        symbols=42_539,
        calls_resolved=110_447,
        calls_unresolved=89_122,
        facts=220_882,
        created=220_882,
        seconds={"total": 48.52},
    )


def _render(results: list[IndexResult], width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(summary_table(results, width))
    return console.export_text().splitlines()


def test_one_run_on_80_columns_shows_every_field_uncut() -> None:
    lines = _render([_result("3990c0ad1e09aa", 2864)], 80)
    text = "\n".join(lines)
    assert "…" not in text
    assert max(len(line) for line in lines) <= 80
    for column, value in (
        ("commit", "3990c0ad1e09"),
        ("files", "2864/2864"),
        ("symbols", "42,539"),
        ("unresolved", "89,122"),
        ("seconds", "48.52"),
        ("lines/s", "10,173"),
    ):
        assert any(column in line and value in line for line in lines), (column, value)


def test_a_history_on_80_columns_keeps_the_main_columns_uncut() -> None:
    lines = _render([_result("aaaaaaaaaaaa11", 10), _result("bbbbbbbbbbbb22", 2864)], 80)
    text = "\n".join(lines)
    assert "…" not in text
    header = next(line for line in lines if "commit" in line)
    assert all(column in header for column in NARROW_COLUMNS)
    assert "aaaaaaaaaaaa" in text
    assert "2864/2864" in text


def test_a_wide_terminal_gets_every_column_in_one_row() -> None:
    lines = _render([_result("3990c0ad1e09aa", 2864)], 160)
    header = next(line for line in lines if "commit" in line)
    assert all(column in header for column in SUMMARY_COLUMNS)
    assert "…" not in "\n".join(lines)

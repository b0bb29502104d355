"""`strata index`: index a local git repository into the code layer."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from strata.cli.console import console, say, settings
from strata.cli.main import skip_teardown
from strata.errors import ValidationError

if TYPE_CHECKING:
    from strata.code.result import IndexResult
    from strata.indexd.protocol import IndexRequest
    from strata.settings import Settings


def index(
    path: Path = typer.Argument(..., help="A local git clone (bare or with a work tree)."),
    repo: str | None = typer.Option(None, help="Repository name (default: the folder name)."),
    ref: str = typer.Option("main", help="The ref name to record the facts under."),
    rev: str = typer.Option("HEAD", help="The commit (or ref) to index."),
    since: str | None = typer.Option(None, help="Also index history since this date (ISO)."),
    commits: int | None = typer.Option(None, min=1, help="Also index the last N commits."),
    daemon: bool = typer.Option(
        True,
        "--daemon/--no-daemon",
        help="Index through the index daemon, which keeps the parsed tree between runs "
        "(started when none runs; exits after STRATA_INDEX_DAEMON_IDLE_S idle, 0: never used).",
    ),
) -> None:
    """Index a repository (default: its HEAD only; --since/--commits for history)."""
    from strata.indexd.protocol import IndexRequest, parse_since
    from strata.jobs import REPO_NAME_PATTERN

    name = repo or path.resolve().name.removesuffix(".git")
    if not re.match(REPO_NAME_PATTERN, name):
        raise ValidationError(
            f"invalid repository name {name!r}", hint="use letters, digits, '.', '_' and '-'"
        )
    since_at = parse_since(since)
    s = settings()
    request = IndexRequest(
        str(path.resolve()), name, ref, rev, since_at.isoformat() if since_at else None, commits
    )
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("indexing", total=None, info="")
        results = None
        if daemon and s.index_daemon_idle_s > 0:
            from strata.indexd import client

            results = client.index(s, request, _reporter(bar, task))
            if results is None:
                bar.console.print(
                    "[dim]the index daemon is busy with another repository: "
                    "indexing in this process[/]"
                )
        if results is None:
            results = _index_here(s, request, _reporter(bar, task))
            skip_teardown()  # the index's heap is done with; everything it wrote is on disk
    _summary(results)


def _index_here(s: Settings, request: IndexRequest, progress: Any) -> list[IndexResult]:
    """The index run in this process."""
    from strata.code.service import CodeService
    from strata.graph.gateway import Gateway
    from strata.indexd.protocol import index_with
    from strata.ontology import load_ontology

    with Gateway.connect(s) as gateway:
        service = CodeService(s, gateway, load_ontology(s.ontology_dir))
        return index_with(service, request, progress)


def _reporter(bar: Progress, task: TaskID) -> Any:
    def report(phase: str, counters: dict[str, Any]) -> None:
        if phase == "parsing":
            bar.update(
                task,
                description="parsing",
                info=f"{counters['files']} files ({counters['cached']} cached)",
            )
        elif phase == "writing" and "total" in counters:
            bar.update(
                task,
                description="writing",
                total=counters["total"],
                completed=counters["written"],
                info=f"{counters['written']} facts",
            )
        elif phase == "writing":
            bar.update(
                task,
                description="writing",
                total=counters["facts"],
                completed=0,
                info=f"{counters['facts']} facts",
            )
        elif phase == "retracted":  # a failed first index took its facts back
            bar.update(task, description="failed", info=f"{counters['facts']} facts taken back")
        elif phase == "done":
            bar.update(task, description="indexed", info=str(counters.get("commit", ""))[:12])

    return report


# The summary's columns, and the few kept when the terminal is too narrow for all
# of them (13 columns need ~130; at 80 every cell was cut to `co…`).
SUMMARY_COLUMNS = (
    "commit", "mode", "files", "parsed", "lines", "symbols", "calls",
    "unresolved", "facts", "created", "closed", "seconds", "lines/s",
)  # fmt: skip
NARROW_COLUMNS = ("commit", "mode", "files", "symbols", "calls", "facts", "seconds")
WIDE_SUMMARY = 132


def _summary_cells(r: IndexResult) -> dict[str, str]:
    seconds = r.seconds.get("total", 0.0)
    return {
        "commit": r.commit[:12],
        "mode": r.mode,
        "files": f"{r.files_written}/{r.files_total}",
        "parsed": f"{r.files_parsed:,}",
        "lines": f"{r.lines:,}",
        "symbols": f"{r.symbols:,}",
        "calls": f"{r.calls_resolved:,}",
        "unresolved": f"{r.calls_unresolved:,}",
        "facts": f"{r.facts:,}",
        "created": f"{r.created:,}",
        "closed": f"{r.closed:,}",
        "seconds": f"{seconds:.2f}",
        "lines/s": f"{r.lines / seconds:,.0f}" if seconds and r.lines else "-",
    }


def summary_table(results: list[IndexResult], width: int) -> Table:
    """The runs' summary for a terminal ``width`` columns wide: every column when it
    fits; else one run as a column of fields, several runs with the main columns."""
    cells = [_summary_cells(r) for r in results]
    wide = width >= WIDE_SUMMARY
    if not wide and len(cells) == 1:
        table = Table("", "", show_header=False)
        for column in SUMMARY_COLUMNS:
            table.add_row(column, cells[0][column])
        return table
    columns = SUMMARY_COLUMNS if wide else NARROW_COLUMNS
    table = Table(*columns)
    for row in cells:
        table.add_row(*(row[c] for c in columns))
    return table


def _summary(results: list[IndexResult]) -> None:
    table = summary_table(results, console.width)
    console.print(table)
    last = results[-1]
    if last.skipped:
        say("skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(last.skipped.items())))
    if last.parse_errors:
        say(f"[yellow]{last.parse_errors} file(s) had syntax errors[/] (indexed what parsed)")

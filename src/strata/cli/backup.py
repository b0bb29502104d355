"""`strata backup dump|restore`: a logical backup of the graph, and its restore."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from strata.cli.console import say, settings

if TYPE_CHECKING:
    from strata.graph.backup import BackupSummary

app = typer.Typer(
    help="Back up the graph to one file and restore it into a fresh store.",
    no_args_is_help=True,
)


def _progress(what: str, count: int) -> None:
    if count % 50000 == 0:
        say(f"  {count:,} {what}")


def _report(verb: str, summary: BackupSummary) -> None:
    say(
        f"[green]{verb}[/] {summary.nodes:,} nodes and {summary.relationships:,} relationships "
        f"({summary.path}, {summary.seconds:.1f} s)"
    )


@app.command("dump")
def dump(
    path: Path = typer.Argument(..., help="Backup file to write (gzip'd JSON lines)."),
) -> None:
    """Write every node and relationship to PATH (written to PATH.partial, then renamed)."""
    from strata.graph import backup
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    s = settings()
    with Gateway.connect(s) as gateway:
        summary = backup.dump(gateway, load_ontology(s.ontology_dir), path, progress=_progress)
    _report("backed up", summary)


@app.command("restore")
def restore(
    path: Path = typer.Argument(..., help="A file written by `strata backup dump`."),
) -> None:
    """Load PATH into an empty graph (checked whole first; needs the same STRATA_SECRET_KEY
    for API keys and webhook secrets to keep working)."""
    from strata.graph import backup
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    s = settings()
    with Gateway.connect(s) as gateway:
        summary = backup.restore(
            gateway, load_ontology(s.ontology_dir), path, s.migrations_dir, progress=_progress
        )
    _report("restored", summary)

"""`strata check-integrity`: prove one timeline per fact slot of a repository."""

from __future__ import annotations

import typer
from rich.table import Table

from strata.cli.console import console, say, settings


def check_integrity(
    repo: str = typer.Option(..., help="The repository whose facts to check."),
    limit: int = typer.Option(20, min=1, help="Violating slots to list per fact type."),
) -> None:
    """Check that every fact slot has at most one open version and no overlaps.

    Exits 0 when the repository's facts hold both invariants, 1 when not.
    """
    from strata.graph.gateway import Gateway
    from strata.graph.integrity import check_repository
    from strata.ontology import load_ontology

    s = settings()
    with Gateway.connect(s) as gateway:
        report = check_repository(gateway, load_ontology(s.ontology_dir), repo, limit=limit)
    if not report.slots:
        say(f"[yellow]no facts of repository {repo!r}[/]")
        raise typer.Exit(1)
    table = Table("fact type", "slots", "unexpired versions", "violations")
    for rel, slots in sorted(report.slots.items()):
        bad = sum(1 for v in report.violations if v.rel == rel)
        table.add_row(rel, f"{slots:,}", f"{report.versions[rel]:,}", str(bad))
    console.print(table)
    for violation in report.violations:
        say(f"[red]{violation.rel}[/] {violation.describe()}")
    if not report.ok:
        say(
            f"[bold red]{report.duplicates} slot(s) with several open versions, "
            f"{report.overlapping} with overlapping versions[/]"
        )
        raise typer.Exit(1)
    say(f"[green]ok[/]: {sum(report.slots.values()):,} slots, one timeline each")

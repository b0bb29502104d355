"""`strata lint`: contradictions, stale card claims, unlinked requirements, vanished links."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from strata.cli.console import console, say, settings


def lint(
    repo: str = typer.Option(..., "--repo", help="The indexed repository."),
    ref: str = typer.Option("main", help="The ref."),
    output_format: str = typer.Option("markdown", "--format", help="markdown or json."),
    output: Path | None = typer.Option(None, help="Write the report here instead of stdout."),
) -> None:
    """Lint a repository's knowledge as of now; exit 1 when it finds an error."""
    from strata.cards.lint import lint_repository
    from strata.errors import ValidationError
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    if output_format not in ("markdown", "json"):
        raise ValidationError(f"--format is markdown or json, not {output_format!r}")
    s = settings()
    with Gateway.connect(s) as gateway:
        report = lint_repository(gateway, load_ontology(s.ontology_dir), repo, ref)
    text = (
        json.dumps(report.to_json(), indent=2) + "\n"
        if output_format == "json"
        else report.markdown()
    )
    if output is not None:
        output.write_text(text)
        say(f"wrote {output}: {len(report.findings)} finding(s), ok={report.ok}")
    else:
        console.print(text, markup=False, highlight=False, soft_wrap=True, end="")
    if not report.ok:
        raise typer.Exit(1)

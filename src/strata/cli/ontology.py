"""`strata ontology ...`: check the contract and print the schema it needs."""

from __future__ import annotations

import typer
from rich.table import Table

from strata.cli.console import console, say, settings

app = typer.Typer(help="The versioned ontology (ontology/strata.vN.yaml).", no_args_is_help=True)


@app.command("check")
def check(
    version: int | None = typer.Option(None, help="Version to check (default: newest)."),
) -> None:
    """Validate the ontology file and print a summary table."""
    from strata.ontology import load_ontology

    ontology = load_ontology(settings().ontology_dir, version)
    nodes = Table(
        "label",
        "layer",
        "key",
        "state (required / optional)",
        "writer",
        title=f"ontology v{ontology.version}: node types",
    )
    for node in ontology.nodes.values():
        nodes.add_row(
            node.label,
            node.layer,
            ", ".join(node.key),
            f"{len(node.state.required)} / {len(node.state.optional)}",
            node.writer,
        )
    edges = Table("type", "layer", "from", "to", "required", "writer", title="edge types")
    for edge in ontology.edges.values():
        edges.add_row(
            edge.type,
            edge.layer,
            ", ".join(edge.from_labels),
            ", ".join(edge.to_labels),
            ", ".join(p.name for p in edge.props.required),
            edge.writer,
        )
    console.print(nodes)
    console.print(edges)
    say(
        f"[green]ontology v{ontology.version} is valid[/]: {len(ontology.nodes)} node types, "
        f"{len(ontology.edges)} edge types"
    )


@app.command("schema")
def schema(version: int | None = typer.Option(None, help="Version (default: newest).")) -> None:
    """Print the constraints and indexes this ontology needs (for a new migration)."""
    from strata.ontology import load_ontology
    from strata.ontology.schema import schema_statements

    for statement in schema_statements(load_ontology(settings().ontology_dir, version)):
        console.print(f"{statement};", highlight=False, soft_wrap=True)

"""Entry point of the `strata` command."""

from __future__ import annotations

import sys

import typer

# Every command module is cheap to import (typer, rich, the standard library):
# the settings, the graph driver and the layers load inside the command that
# runs, so `strata --help` and `strata graphql` never pay for them
# (tests/unit/cli/test_imports.py holds that).
from strata.cli import (
    admin,
    api,
    backup,
    cards,
    code,
    dev,
    hook,
    knowledge,
    lint,
    mcp,
    ontology,
    search,
    trace,
)
from strata.cli.console import console, err_console, say, settings
from strata.cli.context import context
from strata.cli.integrity import check_integrity
from strata.errors import StrataError

app = typer.Typer(
    help="Strata: a bitemporal knowledge-graph memory for AI coding agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(dev.app, name="dev")
app.add_typer(ontology.app, name="ontology")
app.command("index")(code.index)
app.command("graphql")(api.graphql)
app.command("reindex")(api.reindex)
app.command("rebuild")(trace.rebuild)
app.add_typer(trace.app, name="trace")
app.add_typer(admin.repo_app, name="repo")
app.add_typer(admin.key_app, name="key")
app.add_typer(knowledge.app, name="knowledge")
app.add_typer(backup.app, name="backup")
app.add_typer(cards.app, name="cards")
app.command("lint")(lint.lint)
app.add_typer(hook.app, name="hook")
app.command("mcp")(mcp.mcp)
app.command("search")(search.search)
app.command("context")(context)
app.command("check-integrity")(check_integrity)


@app.command()
def up() -> None:
    """Start Neo4j, Redis, migrations, the API and one worker per queue."""
    from strata.devstack import stack

    stack.up(settings(), say)
    say("[green]stack is up[/] (logs under var/log; `strata status`, `strata down`)")


@app.command()
def down() -> None:
    """Stop the whole local stack."""
    from strata.devstack import stack

    stack.down(settings(), say)
    say("stack is down")


@app.command()
def status() -> None:
    """Show each component of the local stack."""
    from rich.table import Table

    from strata.devstack import stack

    table = Table("component", "state", "pid", "detail")
    rows = stack.status(settings())
    for row in rows:
        state = "[green]running[/]" if row.running else "[red]stopped[/]"
        table.add_row(row.name, state, str(row.pid or "-"), row.detail)
    console.print(table)
    if not all(row.running for row in rows):
        raise typer.Exit(3)


@app.command()
def migrate() -> None:
    """Apply pending Cypher migrations in order (a re-run applies nothing)."""
    from strata.graph import migrations
    from strata.graph.gateway import Gateway

    s = settings()
    with Gateway.connect(s) as gateway:
        applied = migrations.migrate(gateway, s.migrations_dir)
        state = migrations.status(gateway, s.migrations_dir)
    for migration in applied:
        say(f"applied {migration.id:04d}_{migration.name}")
    say(f"[green]migrations at head[/] ({len(state.applied)} applied, {len(applied)} now)")


def main() -> None:
    """Run the CLI; a StrataError becomes one clear message and exit code 1."""
    try:
        app()
    except StrataError as exc:
        err_console.print(f"[bold red]error:[/] {exc.message}", highlight=False)
        if exc.hint:
            err_console.print(f"[yellow]hint:[/] {exc.hint}", highlight=False)
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)

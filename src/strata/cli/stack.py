"""The local stack's own commands: `strata up`, `down`, `status`, `migrate`."""

from __future__ import annotations

import typer

from strata.cli.console import say, settings


def up() -> None:
    """Start Neo4j, Redis, migrations, the API and one worker per queue."""
    from strata.devstack import stack

    s = settings()
    stack.up(s, say)
    say(f"[green]stack is up[/] (logs under {s.var_dir / 'log'}; `strata status`, `strata down`)")


def down() -> None:
    """Stop the whole local stack."""
    from strata.devstack import stack

    stack.down(settings(), say)
    say("stack is down")


def status() -> None:
    """Show each component of the local stack."""
    from rich.table import Table

    from strata.cli.console import console
    from strata.devstack import stack

    table = Table("component", "state", "pid", "detail")
    rows = stack.status(settings())
    for row in rows:
        state = "[green]running[/]" if row.running else "[red]stopped[/]"
        table.add_row(row.name, state, str(row.pid or "-"), row.detail)
    console.print(table)
    if not all(row.running for row in rows):
        raise typer.Exit(3)


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

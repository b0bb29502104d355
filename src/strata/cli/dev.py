"""`strata dev ...`: the local Neo4j and Redis, without Docker."""

from __future__ import annotations

import typer

from strata.cli.console import say, settings

app = typer.Typer(
    help="Local development services (real Neo4j and Redis, no Docker).", no_args_is_help=True
)
neo4j_app = typer.Typer(
    help="The local Neo4j 5.26 Community (embedded DBMS with Bolt).", no_args_is_help=True
)
redis_app = typer.Typer(help="The local Redis (Debian's redis-server).", no_args_is_help=True)
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(redis_app, name="redis")


@neo4j_app.command("install")
def neo4j_install() -> None:
    """Resolve Neo4j from Maven Central and compile the launcher."""
    from strata.devstack import neo4j as neo4j_dev

    paths = neo4j_dev.install(settings().var_dir, quiet=False)
    say(f"[green]neo4j runtime ready[/] in {paths.cache}")


@neo4j_app.command("start")
def neo4j_start(timeout: float = typer.Option(120.0, help="Seconds to wait for Bolt.")) -> None:
    """Start Neo4j in the background; returns once Bolt answers a query."""
    from strata.devstack.neo4j import Neo4jServer

    server = Neo4jServer.from_settings(settings())
    started = server.start(timeout=timeout)
    say(
        f"[green]neo4j {'started' if started else 'already running'}[/] at {server.uri} "
        f"(data: {server.data_dir}, log: {server.proc.log_file})"
    )


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop Neo4j cleanly (SIGTERM: checkpoint and close the store)."""
    from strata.devstack.neo4j import Neo4jServer

    stopped = Neo4jServer.from_settings(settings()).stop()
    say("neo4j stopped" if stopped else "neo4j was not running")


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Is Neo4j running?"""
    from strata.devstack.neo4j import Neo4jServer

    server = Neo4jServer.from_settings(settings())
    pid = server.proc.pid()
    say(f"neo4j running (pid {pid}) at {server.uri}" if pid else "neo4j stopped")
    if not pid:
        raise typer.Exit(3)


@app.command("compile")
def compile_native(
    check: bool = typer.Option(
        False, "--check", help="Only say whether the build matches the sources (exit 3 if not)."
    ),
) -> None:
    """Compile the code layer's parser and resolver to C (mypyc; needs a C compiler)."""
    from strata.code import native

    result = native.inspect() if check else native.build()
    say(f"{'compiled' if result.compiled else 'interpreted'}: {result.reason}")
    if not result.compiled:
        raise typer.Exit(3)


@redis_app.command("start")
def redis_start() -> None:
    """Start Redis on loopback (installs Debian's redis-server if missing and root)."""
    from strata.devstack.redis import RedisServer

    server = RedisServer.from_settings(settings())
    started = server.start()
    say(f"[green]redis {'started' if started else 'already running'}[/] at {server.url}")


@redis_app.command("stop")
def redis_stop() -> None:
    """Stop Redis."""
    from strata.devstack.redis import RedisServer

    stopped = RedisServer.from_settings(settings()).stop()
    say("redis stopped" if stopped else "redis was not running")


@redis_app.command("status")
def redis_status() -> None:
    """Is Redis running?"""
    from strata.devstack.redis import RedisServer

    server = RedisServer.from_settings(settings())
    pid = server.proc.pid()
    say(f"redis running (pid {pid}) at {server.url}" if pid else "redis stopped")
    if not pid:
        raise typer.Exit(3)

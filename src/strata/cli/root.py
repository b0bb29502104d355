"""The `strata` command tree: the root group, its lazy subcommands and the stack's own.

Help is click's plain layout (``rich_markup_mode=None``): rendering it through
rich meant importing rich's markdown, traceback and syntax modules (pygments,
attrs) on every `--help`, more than the rest of the start-up together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import typer

# Nothing here imports a command module: LazyGroup imports the one that runs.
# Command modules themselves stay cheap (typer, the standard library): the
# settings, the graph driver and the layers load inside the command's body
# (tests/unit/cli/test_imports.py holds both).
from strata.cli.lazy import Lazy, LazyGroup


class StrataGroup(LazyGroup):
    """The root `strata` group: every subcommand but the stack's own loads on use."""

    lazy: ClassVar[Mapping[str, Lazy]] = {
        "index": Lazy(
            "strata.cli.code:index",
            "Index a repository (default: its HEAD only; --since/--commits for history).",
        ),
        "graphql": Lazy(
            "strata.cli.api:graphql",
            "Send one GraphQL query to the running API and print the answer (exit 1 on errors).",
        ),
        "reindex": Lazy(
            "strata.cli.api:reindex",
            "Ask the code worker to index a repository (through the API) and follow the job.",
        ),
        "rebuild": Lazy(
            "strata.cli.trace:rebuild",
            "Drop the repository's projection and replay it from git (documents are kept).",
        ),
        "lint": Lazy(
            "strata.cli.lint:lint",
            "Lint a repository's knowledge as of now; exit 1 when it finds an error.",
        ),
        "mcp": Lazy(
            "strata.cli.mcp:mcp",
            "Serve search, symbol, callers, callees, impact, history and changes over MCP.",
        ),
        "search": Lazy(
            "strata.cli.search:search",
            "Search a repository: full text, vectors and graph proximity, fused by rank.",
        ),
        "context": Lazy(
            "strata.cli.context:context",
            "A context pack for a task: routed, gathered, gated, cited, within the budget.",
        ),
        "check-integrity": Lazy(
            "strata.cli.integrity:check_integrity",
            "Check that every fact slot has at most one open version and no overlaps.",
        ),
        "dev": Lazy(
            "strata.cli.dev:app", "Local development services (real Neo4j and Redis, no Docker)."
        ),
        "ontology": Lazy(
            "strata.cli.ontology:app", "The versioned ontology (ontology/strata.vN.yaml)."
        ),
        "trace": Lazy(
            "strata.cli.trace:app", "Traceability: requirements, links, and the CI gate."
        ),
        "repo": Lazy("strata.cli.admin:repo_app", "Registered repositories (webhook targets)."),
        "key": Lazy(
            "strata.cli.admin:key_app", "API keys: scopes read, write, admin; per repository."
        ),
        "knowledge": Lazy(
            "strata.cli.knowledge:app", "Documents through graphiti: ingest, or queue an ingest."
        ),
        "backup": Lazy(
            "strata.cli.backup:app",
            "Back up the graph to one file and restore it into a fresh store.",
        ),
        "cards": Lazy("strata.cli.cards:app", "Knowledge cards: one checked card per package."),
        "hook": Lazy("strata.cli.hook:app", "Git hooks that keep the cards fresh."),
        "up": Lazy(
            "strata.cli.stack:up",
            "Start Neo4j, Redis, migrations, the API and one worker per queue.",
        ),
        "down": Lazy("strata.cli.stack:down", "Stop the whole local stack."),
        "status": Lazy("strata.cli.stack:status", "Show each component of the local stack."),
        "migrate": Lazy(
            "strata.cli.stack:migrate",
            "Apply pending Cypher migrations in order (a re-run applies nothing).",
        ),
    }
    # As typer listed them when every command was registered up front: commands,
    # then groups.
    order = (
        *("index", "graphql", "reindex", "rebuild", "lint", "mcp", "search", "context"),
        *("check-integrity", "up", "down", "status", "migrate"),
        *("dev", "ontology", "trace", "repo", "key", "knowledge", "backup", "cards", "hook"),
    )


app = typer.Typer(
    cls=StrataGroup,
    help="Strata: a bitemporal knowledge-graph memory for AI coding agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
)


@app.callback()
def root() -> None:
    """Strata: a bitemporal knowledge-graph memory for AI coding agents."""
    # Every subcommand is lazy, so the app registers none: this (empty) callback
    # is what makes typer build a group rather than refuse an app without commands.

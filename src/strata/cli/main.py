"""Entry point of the `strata` command.

This module imports neither typer nor rich: `strata graphql QUERY` (what an
agent calls in a loop) runs through :mod:`strata.cli.quick` without them, and
everything else through the typer app of :mod:`strata.cli.root`, imported
only then. ``strata.cli.main.app`` still names that app (tests run it).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from strata.errors import StrataError

if TYPE_CHECKING:
    from strata.cli.root import StrataGroup, app

__all__ = ["StrataGroup", "app", "main", "report"]


def __getattr__(name: str) -> Any:
    if name in ("app", "StrataGroup"):
        from strata.cli import root

        return getattr(root, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Run the CLI; a StrataError becomes one clear message and exit code 1."""
    try:
        from strata.cli.quick import run_quick

        status = run_quick(sys.argv[1:])
        if status is not None:
            sys.exit(status)
        from strata.cli.root import app

        app()
    except StrataError as exc:
        report(exc)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)


def report(exc: StrataError) -> None:
    """A StrataError as the CLI says it: ``error: message`` and its hint, on stderr."""
    from strata.cli.console import err_console

    err_console.print(f"[bold red]error:[/] {exc.message}", highlight=False)
    if exc.hint:
        err_console.print(f"[yellow]hint:[/] {exc.hint}", highlight=False)

"""Entry point of the `strata` command.

This module imports neither typer nor rich: `strata graphql QUERY` (what an
agent calls in a loop) runs through :mod:`strata.cli.quick` without them, and
everything else through the typer app of :mod:`strata.cli.root`, imported
only then. ``strata.cli.main.app`` still names that app (tests run it).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from strata.errors import StrataError

if TYPE_CHECKING:
    from strata.cli.root import StrataGroup, app

__all__ = ["StrataGroup", "app", "main", "report", "skip_teardown"]

# Whether this run ends through the interpreter's teardown (see skip_teardown).
_exit = {"teardown": True}


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
    except SystemExit as exc:
        if exc.code in (None, 0) and not _exit["teardown"]:
            _exit_now()
        raise
    except StrataError as exc:
        report(exc)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)


def skip_teardown() -> None:
    """Let a successful run end without the interpreter freeing its heap.

    A command that built a large heap calls it when its work is done and on
    disk: a full index of Django holds ~900 MB of small objects, and freeing
    them one by one at exit took 3-5 s after the summary was printed. Only
    :func:`main` acts on it (tests run the app in their own process).
    """
    _exit["teardown"] = False


def _exit_now() -> None:
    """Flush what the run printed and logged, then end the process at once."""
    import logging

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def report(exc: StrataError) -> None:
    """A StrataError as the CLI says it: ``error: message`` and its hint, on stderr."""
    from strata.cli.console import err_console

    err_console.print(f"[bold red]error:[/] {exc.message}", highlight=False)
    if exc.hint:
        err_console.print(f"[yellow]hint:[/] {exc.hint}", highlight=False)

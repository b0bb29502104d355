"""Shared rich consoles and the settings every command reads once.

Nothing here (nor in any command module's top level) imports the settings, the
graph driver or a layer: `strata --help` and `strata graphql` pay only for what
they use. Commands import what they need inside their bodies. Even rich loads
only when a command first uses ``console`` or ``err_console`` (they are made on
first access), so help and the quick `strata graphql` path never import it.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from strata.settings import Settings

    console: Console
    err_console: Console


# Piped (an agent, a log, `| less`), rich assumes 80 columns and cuts every table
# cell to "co… fi…"; a wide fixed width keeps the words whole.
PIPED_WIDTH = 240


@cache
def _console(stderr: bool) -> Console:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else PIPED_WIDTH)


def __getattr__(name: str) -> Any:
    """``console`` (stdout) and ``err_console`` (stderr), made on first access."""
    if name == "console":
        return _console(False)
    if name == "err_console":
        return _console(True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def settings() -> Settings:
    """The process's settings, read on first use by a command."""
    from strata.settings import load_settings

    return load_settings()


def say(message: str) -> None:
    """Print ``message`` (rich markup) on stdout."""
    _console(False).print(message, highlight=False)

"""Shared rich console and the settings every command reads once.

Nothing here (nor in any command module's top level) imports the settings, the
graph driver or a layer: `strata --help` and `strata graphql` pay only for what
they use. Commands import what they need inside their bodies.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from strata.settings import Settings

# Piped (an agent, a log, `| less`), rich assumes 80 columns and cuts every table
# cell to "co… fi…"; a wide fixed width keeps the words whole.
PIPED_WIDTH = 240
console = Console(width=None if sys.stdout.isatty() else PIPED_WIDTH)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else PIPED_WIDTH)


@cache
def settings() -> Settings:
    """The process's settings, read on first use by a command."""
    from strata.settings import load_settings

    return load_settings()


def say(message: str) -> None:
    console.print(message, highlight=False)

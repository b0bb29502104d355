"""Shared rich console and the settings every command reads once."""

from __future__ import annotations

from functools import cache

from rich.console import Console

from strata.settings import Settings, load_settings

console = Console()
err_console = Console(stderr=True)


@cache
def settings() -> Settings:
    """The process's settings, read on first use by a command."""
    return load_settings()


def say(message: str) -> None:
    console.print(message, highlight=False)

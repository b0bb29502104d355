"""Subcommands that are imported when they run, not when the CLI starts.

`strata --help` and `strata graphql` are what an agent calls in a loop. With
every command module imported and turned into a click command up front, each
call paid for all of them. :class:`LazyGroup` (the root group's class) knows
each subcommand by name, where it lives and its summary; it imports a command
(and builds its click command) only when that command runs or prints its own
help. The root's help lists the summaries without importing anything, whole
(click's plain layout would cut them at the terminal's width);
tests/unit/cli/test_lazy.py checks each equals the command's own first paragraph.

The root prints its help in click's plain layout (cheap: rich's markdown,
traceback and syntax modules are most of a start-up); the subcommands keep
typer's rich layout, which only their own `--help` pays for.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
from typer import _click  # the click copy typer 0.29 vendors; its commands are these
from typer.core import MarkupMode, TyperGroup
from typer.main import get_command_from_info, get_group_from_info
from typer.models import CommandInfo, TyperInfo


@dataclass(frozen=True, slots=True)
class Lazy:
    """Where a subcommand lives and the summary the root's help shows for it.

    ``target`` is ``"module:attribute"``: a command function, or a
    :class:`typer.Typer` for a group of commands.
    """

    target: str
    summary: str

    def load(self) -> Any:
        """The command function or :class:`typer.Typer` (imports its module)."""
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)


def first_paragraph(text: str | None) -> str:
    """A help text's first paragraph on one line (what a command list shows)."""
    return " ".join((text or "").split("\n\n", 1)[0].split())


class LazyGroup(TyperGroup):
    """A typer group whose :attr:`lazy` subcommands load on first use."""

    lazy: ClassVar[Mapping[str, Lazy]] = {}
    # The order the root's help lists commands in.
    order: ClassVar[tuple[str, ...]] = ()
    # How the subcommands render their own help.
    subcommand_markup: ClassVar[MarkupMode] = "rich"

    def list_commands(self, ctx: _click.Context) -> list[str]:
        names = [*super().list_commands(ctx), *self.lazy]
        rank = {name: i for i, name in enumerate(self.order)}
        return sorted(dict.fromkeys(names), key=lambda n: rank.get(n, len(rank)))

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in self.lazy:
            return found
        command = self.load(cmd_name)
        self.add_command(command, cmd_name)
        return command

    def load(self, name: str) -> _click.Command:
        """The click command of the lazy subcommand ``name``, built as typer builds
        a registered one (``app.command(name)`` / ``app.add_typer(..., name=name)``)."""
        target = self.lazy[name].load()
        if isinstance(target, typer.Typer):
            return get_group_from_info(
                TyperInfo(target, name=name),
                pretty_exceptions_short=True,
                suggest_commands=self.suggest_commands,
                rich_markup_mode=self.subcommand_markup,
            )
        return get_command_from_info(
            CommandInfo(name=name, callback=target),
            pretty_exceptions_short=True,
            rich_markup_mode=self.subcommand_markup,
        )

    def format_commands(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        """The command list: each command's whole summary, wrapped (nothing imported)."""
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            loaded = super().get_command(ctx, name)
            if loaded is None:
                rows.append((name, self.lazy[name].summary))
            elif not loaded.hidden:
                rows.append((name, first_paragraph(loaded.short_help or loaded.help)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

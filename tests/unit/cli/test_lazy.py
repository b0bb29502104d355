"""Lazy subcommands read exactly as registered ones: same help, same order, same summaries.

The oracle is the CLI wired the way it was before it went lazy: every command
module imported and registered on a plain typer app (``app.command(name)`` for
a function, ``app.add_typer(sub, name=name)`` for a group). Every subcommand's
help page must come out the same from both; the root's lists every command in
the oracle's order with the whole first paragraph of the command's own help.
"""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from strata.cli.lazy import first_paragraph
from strata.cli.main import StrataGroup, app

ENV = {"COLUMNS": "100"}


def _registered_up_front() -> typer.Typer:
    """The same CLI with every subcommand imported and registered at once."""
    eager = typer.Typer(help=app.info.help, no_args_is_help=True, add_completion=False)
    for name, lazy in StrataGroup.lazy.items():
        target = lazy.load()
        if isinstance(target, typer.Typer):
            eager.add_typer(target, name=name)
        else:
            eager.command(name)(target)
    return eager


def _help(cli: typer.Typer, *argv: str) -> str:
    done = CliRunner().invoke(cli, [*argv, "--help"], env=ENV)
    assert done.exit_code == 0, (argv, done.output)
    return done.output


def _pages() -> list[tuple[str, ...]]:
    """Every command path below the root: each subcommand, each command of a group."""
    pages: list[tuple[str, ...]] = []
    for name, lazy in StrataGroup.lazy.items():
        pages.append((name,))
        target = lazy.load()
        if isinstance(target, typer.Typer):
            group = typer.main.get_group(target)
            for sub, command in group.commands.items():
                pages.append((name, sub))
                if isinstance(command, typer.core.TyperGroup):
                    pages += [(name, sub, leaf) for leaf in command.commands]
    return pages


class TestLazyIsTheSameCli:
    """Loading on demand changes no help page and no order."""

    def test_every_subcommand_help_page_matches_the_up_front_registration(self) -> None:
        eager = _registered_up_front()
        pages = _pages()
        assert len(pages) > 40  # the whole tree, not a few pages
        for argv in pages:
            assert _help(app, *argv) == _help(eager, *argv), argv

    def test_the_root_lists_every_command_in_order_with_its_whole_summary(self) -> None:
        eager = typer.main.get_group(_registered_up_front())
        ctx = typer.Context(eager)
        assert list(StrataGroup.order) == eager.list_commands(ctx)
        listed = " ".join(_help(app).split())
        for name in StrataGroup.order:
            command = eager.get_command(ctx, name)
            assert command is not None
            summary = first_paragraph(command.help)
            assert StrataGroup.lazy[name].summary == summary, name
            assert f"{name} {summary}" in listed, name

    def test_an_unknown_command_is_still_refused(self) -> None:
        done = CliRunner().invoke(app, ["no-such-command"])
        assert done.exit_code == 2
        assert "No such command" in done.output

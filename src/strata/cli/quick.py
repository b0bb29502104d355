"""`strata graphql QUERY` without building the typer CLI.

typer (0.29) coerces every option value through pydantic: importing pydantic
and its plugin loader was a third of the command's start-up, and typer itself
another. An agent calls this command in a loop, so a command line this module
can read whole — ``graphql`` and one query, with the command's own long options
as ``--flag value`` or ``--flag=value`` — runs :func:`strata.cli.client.run_graphql`
directly. Anything else (``--help``, a short or unknown flag, ``--``, a missing
query, a ``--format`` typer would refuse) returns None and goes to typer, so help
and usage errors stay typer's. tests/unit/cli/test_quick.py holds the options
below equal to the typer command's declaration and both paths to the same call.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Opt:
    """One option of the command: its parameter, flag, default and environment variable."""

    name: str
    flag: str
    default: str | None
    envvar: str | None = None
    choices: tuple[str, ...] = ()


GRAPHQL = (
    Opt("variables", "--variables", "{}"),
    Opt("fmt", "--format", "json", choices=("table", "json", "compact")),
    Opt("url", "--url", None),
    Opt("api_key", "--api-key", None, envvar="STRATA_API_KEY"),
)


def parse_graphql(argv: Sequence[str]) -> dict[str, str | None] | None:
    """The ``graphql`` command's arguments from ``argv``, or None (typer must parse it)."""
    if not argv or argv[0] != "graphql":
        return None
    by_flag = {opt.flag: opt for opt in GRAPHQL}
    given: dict[str, str] = {}
    queries: list[str] = []
    rest = iter(argv[1:])
    for token in rest:
        if not token.startswith("-"):
            queries.append(token)
            continue
        flag, equals, value = token.partition("=")
        opt = by_flag.get(flag)
        if opt is None:
            return None
        if not equals:
            following = next(rest, None)
            if following is None:
                return None
            value = following
        given[opt.name] = value  # a repeated option: the last one wins, as in click
    if len(queries) != 1:
        return None
    values: dict[str, str | None] = {"query": queries[0]}
    for opt in GRAPHQL:
        found = given.get(opt.name)
        if found is None and opt.envvar:
            found = os.environ.get(opt.envvar) or None  # click ignores an empty variable
        values[opt.name] = opt.default if found is None else found
        if opt.choices and values[opt.name] not in opt.choices:
            return None
    return values


def run_quick(argv: Sequence[str]) -> int | None:
    """Run ``argv`` if it is a `strata graphql` line this module reads; its exit status,
    or None when typer must run it."""
    values = parse_graphql(argv)
    if values is None:
        return None
    from strata.cli.client import run_graphql
    from strata.cli.output import Format

    return run_graphql(
        str(values["query"]),
        str(values["variables"]),
        Format(str(values["fmt"])),
        values["url"],
        values["api_key"],
    )

"""`strata repo ...` and `strata key ...`: registrations and API keys (admin records).

Secrets never travel on the command line (where `ps` and shell history would
keep them): a webhook secret is prompted for, read from stdin, or generated
and printed once; an API key token is printed once and stored only as a hash.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Column, Table

from strata.cli.console import console, say, settings

if TYPE_CHECKING:
    from strata.registry import KeyRing, RepoRegistry

# Spelled out rather than imported from strata.registry (which loads the graph
# driver and cryptography); tests/unit/cli checks it against PROVIDERS.
PROVIDER_HELP = "One of github, gitlab, gitea, bitbucket (Forgejo: gitea)."

repo_app = typer.Typer(help="Registered repositories (webhook targets).", no_args_is_help=True)
key_app = typer.Typer(
    help="API keys: scopes read, write, admin; per repository.", no_args_is_help=True
)


@contextmanager
def _stores() -> Iterator[tuple[RepoRegistry, KeyRing]]:
    from strata.graph.gateway import Gateway
    from strata.registry import KeyRing, RepoRegistry
    from strata.security import ServerKeys

    s = settings()
    keys = ServerKeys(s.secret_key.get_secret_value())
    with Gateway.connect(s) as gateway:
        yield RepoRegistry(gateway, keys), KeyRing(gateway, keys)


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


@repo_app.command("add")
def repo_add(
    *,
    name: str = typer.Argument(..., help="Repository name (letters, digits, . _ -)."),
    provider: str = typer.Option(..., help=PROVIDER_HELP),
    url: str | None = typer.Option(None, help="Clone URL (https://, ssh://, git@host:path)."),
    path: Annotated[Path | None, typer.Option(help="Local clone or mirror on the server.")] = None,
    branch: str = typer.Option("main", help="Default branch (indexed on push)."),
    secret_stdin: bool = typer.Option(False, help="Read the webhook secret from stdin."),
    generate_secret: bool = typer.Option(
        False, help="Generate a webhook secret and print it once."
    ),
    replace: bool = typer.Option(False, help="Overwrite an existing registration."),
) -> None:
    """Register a repository and its webhook secret (never printed back)."""
    if generate_secret:
        secret = secrets.token_urlsafe(32)
    elif secret_stdin:
        secret = sys.stdin.readline().rstrip("\r\n")
    else:
        secret = typer.prompt("webhook secret", hide_input=True, confirmation_prompt=True)
    with _stores() as (registry, _):
        registration = registry.register(
            name=name,
            provider=provider,
            secret=secret,
            default_branch=branch,
            url=url,
            path=str(path.resolve()) if path else None,
            replace=replace,
        )
    say(f"[green]registered[/] {registration.name} ({registration.provider})")
    say(f"webhook URL: <api base>{registration.webhook_path}")
    if generate_secret:
        say("webhook secret (shown once; paste it into the git host):")
        console.print(secret, highlight=False, soft_wrap=True)


@repo_app.command("list")
def repo_list() -> None:
    """List registered repositories (without their secrets)."""
    with _stores() as (registry, _):
        rows = registry.list_all()
    table = Table(
        Column("name", overflow="fold"), "provider", "branch", "location", "webhook path", "updated"
    )
    for r in rows:
        table.add_row(
            r.name,
            r.provider,
            r.default_branch,
            r.url or r.path or "-",
            r.webhook_path,
            r.updated_at.isoformat(timespec="seconds"),
        )
    console.print(table)


@repo_app.command("remove")
def repo_remove(name: str = typer.Argument(..., help="Repository name.")) -> None:
    """Forget a registration: its webhooks are refused from now on (the graph is kept)."""
    with _stores() as (registry, _):
        registry.remove(name)
    say(f"removed {name}")


@key_app.command("create")
def key_create(
    scopes: str = typer.Option("read", help="Comma-separated: read, write, admin."),
    repos: str = typer.Option(..., help="Comma-separated repository names, or '*'."),
    name: str = typer.Option("", help="A label for humans (who holds the key)."),
    expires_days: int | None = typer.Option(None, min=1, help="Expire after N days."),
    token_only: bool = typer.Option(False, help="Print only the token (for scripts)."),
) -> None:
    """Create an API key and print its token once (only a hash is stored)."""
    expires = timedelta(days=expires_days) if expires_days else None
    with _stores() as (_, ring):
        record, token = ring.create(
            scopes=_split(scopes), repos=_split(repos), name=name, expires_in=expires
        )
    if token_only:
        print(token)
        return
    say(
        f"[green]created key[/] {record.key_id} scopes={','.join(sorted(record.scopes))} "
        f"repos={','.join(sorted(record.repos))}"
    )
    say("token (shown once; send it as `Authorization: Bearer <token>`):")
    console.print(token, highlight=False, soft_wrap=True)


@key_app.command("list")
def key_list() -> None:
    """List API keys (ids, scopes, repositories, state; never tokens)."""
    with _stores() as (_, ring):
        records = ring.list_all()
    table = Table(
        Column("id", overflow="fold"), "name", "scopes", "repos", "state", "created", "expires"
    )
    for k in records:
        table.add_row(
            k.key_id,
            k.name or "-",
            ",".join(sorted(k.scopes)),
            ",".join(sorted(k.repos)),
            k.state(),
            k.created_at.isoformat(timespec="seconds"),
            k.expires_at.isoformat(timespec="seconds") if k.expires_at else "-",
        )
    console.print(table)


@key_app.command("revoke")
def key_revoke(key_id: str = typer.Argument(..., help="Key id (from `strata key list`).")) -> None:
    """Revoke a key; every API process refuses it within STRATA_API_KEY_CACHE_S seconds."""
    with _stores() as (_, ring):
        ring.revoke(key_id)
    say(f"revoked {key_id}")

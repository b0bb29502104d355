"""`strata cards`: build, export and check a repository's knowledge cards."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from strata.cli.console import console, err_console, say, settings

if TYPE_CHECKING:
    from strata.git import Git
    from strata.graph.gateway import Gateway
    from strata.settings import Settings

app = typer.Typer(help="Knowledge cards: one checked card per package.", no_args_is_help=True)


def _git(s: Settings, gateway: Gateway, repo: str, path: Path | None) -> Git | None:
    """A local clone to read CODEOWNERS from: --git, else the registration's path or mirror."""
    from strata.git import Git
    from strata.registry import RepoRegistry
    from strata.security import ServerKeys

    if path is not None:
        git = Git(path)
        git.check()
        return git
    registration = RepoRegistry(gateway, ServerKeys(s.secret_key.get_secret_value())).get(repo)
    if registration is not None and registration.path:
        return Git(Path(registration.path))
    mirror = s.mirrors_dir / f"{repo}.git"
    return Git(mirror) if mirror.exists() else None  # no clone here: owners are optional


@app.command()
def build(
    repo: str = typer.Option(..., "--repo", help="The indexed repository."),
    ref: str = typer.Option("main", help="The ref."),
    commit: str | None = typer.Option(None, help="An indexed commit (default: the ref's head)."),
    git: Path | None = typer.Option(None, help="A local clone to read CODEOWNERS from."),
) -> None:
    """Compile and store one card per package as of a commit."""
    from strata.cards import CardService
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    s = settings()
    with Gateway.connect(s) as gateway:
        service = CardService(gateway, load_ontology(s.ontology_dir))
        cards = service.build(repo, ref, commit, git=_git(s, gateway, repo, git))
    for card in cards:
        say(f"{card.name} ({card.package}): {len(card.claims)} claims, {card.fingerprint}")
    say(f"{len(cards)} cards of {repo}/{ref} at {cards[0].commit[:12] if cards else '-'}")


@app.command()
def export(
    directory: Path = typer.Argument(..., help="Where to write the markdown and index.md."),
    repo: str = typer.Option(..., "--repo", help="The repository."),
    ref: str = typer.Option("main", help="The ref."),
) -> None:
    """Write the stored cards as markdown files plus an index.md."""
    from strata.cards import CardService, export_cards
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    s = settings()
    with Gateway.connect(s) as gateway:
        cards = CardService(gateway, load_ontology(s.ontology_dir)).cards(repo, ref)
    written = export_cards(cards, directory)
    say(f"wrote {len(written)} files to {directory}")


@app.command()
def check(
    repo: str = typer.Option(..., "--repo", help="The repository."),
    ref: str = typer.Option("main", help="The ref."),
) -> None:
    """Gate every card against the graph at its commit and report staleness (exit 1 if any)."""
    from strata.cards import CardService
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    s = settings()
    with Gateway.connect(s) as gateway:
        checks = CardService(gateway, load_ontology(s.ontology_dir)).check(repo, ref)
    table = Table("package", "commit", "claims", "unsupported", "stale")
    for c in checks:
        changed = [*c.staleness.changed, *c.staleness.added, *c.staleness.removed]
        table.add_row(
            c.card.name,
            c.card.commit[:12],
            str(c.gate.checked),
            str(len(c.gate.unsupported)),
            ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "") or "no",
        )
    console.print(table)
    for c in checks:
        for claim, why in c.gate.unsupported:
            err_console.print(f"{c.card.name}: {claim.kind} {claim.object!r}: {why}")
    if not all(c.ok for c in checks):
        raise typer.Exit(1)

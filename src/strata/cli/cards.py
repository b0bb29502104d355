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


@app.command()
def refresh(
    repo: str = typer.Option(..., "--repo", help="The indexed repository."),
    ref: str = typer.Option("main", help="The ref."),
    commit: str | None = typer.Option(None, help="An indexed commit (default: the ref's head)."),
    prose: bool | None = typer.Option(
        None, "--prose/--no-prose", help="Model prose under the gate (default: STRATA_CARDS_PROSE)."
    ),
    git: Path | None = typer.Option(None, help="A local clone to read CODEOWNERS from."),
    package: list[str] | None = typer.Option(None, help="Only these package paths (repeatable)."),
) -> None:
    """Rebuild only the cards that need it (what the worker runs after a push); resumable."""
    from strata.cards import CardService
    from strata.cards.pipeline import CardPipeline
    from strata.cards.prose import ProseWriter
    from strata.cards.spans import Steps, flush, tracer_for
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    s = settings()
    with Gateway.connect(s) as gateway:
        pipeline = CardPipeline(
            CardService(gateway, load_ontology(s.ontology_dir)),
            prose=ProseWriter.from_settings(s)
            if (s.cards_prose if prose is None else prose)
            else None,
            steps=Steps(tracer_for(s)),
            progress=lambda done, total, card: say(
                f"{done}/{total} {card.name}: {card.status or 'compiled'}"
            ),
        )
        try:
            result = pipeline.run(
                repo,
                ref,
                commit,
                git=_git(s, gateway, repo, git),
                packages=set(package or []) or None,
            )
        finally:
            flush(s)
    summary = result.summary()
    say(
        f"{len(result.rebuilt)} rebuilt, {result.fresh} fresh at {result.commit[:12]} in "
        f"{summary['seconds']} s, {summary['tokens']} tokens, cost {summary['cost']}"
    )
    if summary["needs_review"]:
        say(f"[yellow]needs review:[/] {', '.join(summary['needs_review'])}")


@app.command()
def review(
    repo: str = typer.Option(..., "--repo", help="The repository."),
    ref: str = typer.Option("main", help="The ref."),
    drafts: bool = typer.Option(False, "--drafts", help="Print each failing draft too."),
) -> None:
    """The review queue: cards whose model prose failed every draft (exit 1 when not empty)."""
    from strata.cards import CardService
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    s = settings()
    with Gateway.connect(s) as gateway:
        queued = CardService(gateway, load_ontology(s.ontology_dir)).needs_review(repo, ref)
    table = Table("package", "commit", "drafts", "why")
    for card in queued:
        reasons = card.review.reasons if card.review is not None else ()
        table.add_row(
            card.name,
            card.commit[:12],
            str(card.review.drafts if card.review else 0),
            "; ".join(reasons),
        )
    console.print(table)
    if drafts:
        for card in queued:
            console.print(card.review.draft if card.review else "", markup=False, highlight=False)
    say(f"{len(queued)} card(s) of {repo}/{ref} need review")
    if queued:
        raise typer.Exit(1)


@app.command()
def verify(
    directory: Path = typer.Argument(..., help="A card bundle (strata cards export), e.g. in CI."),
    repo: str = typer.Option(..., "--repo", help="The indexed repository."),
    ref: str = typer.Option("main", help="The ref."),
) -> None:
    """Gate every card file of a bundle against the graph (exit 1 when one fails): the CI job."""
    from strata.cards import CardService
    from strata.errors import ValidationError
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    texts = {p.name: p.read_text() for p in sorted(directory.glob("*.md")) if p.name != "index.md"}
    if not texts:
        raise ValidationError(f"{directory} holds no card (*.md besides index.md)")
    s = settings()
    with Gateway.connect(s) as gateway:
        results = CardService(gateway, load_ontology(s.ontology_dir)).verify(repo, ref, texts)
    failed = 0
    for name, result in results.items():
        if result.ok:
            say(f"[green]ok[/] {name}: {result.checked} claims")
            continue
        failed += 1
        say(
            f"[red]FAIL[/] {name}: {len(result.unsupported)} of {result.checked} claims unsupported"
        )
        for claim, why in result.unsupported:
            err_console.print(f"{name}: {claim.kind} {claim.object!r}: {why}", markup=False)
    say(f"{len(results) - failed} of {len(results)} cards pass the gate")
    if failed:
        raise typer.Exit(1)


def _decide(repo: str, ref: str, package: str, decision: str, by: str | None, note: str) -> None:
    import getpass

    from strata.cards.review import decide
    from strata.cards.service import CardService
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology

    s = settings()
    reviewer = by or f"cli:{getpass.getuser()}"
    with Gateway.connect(s) as gateway:
        service = CardService(gateway, load_ontology(s.ontology_dir))
        card = decide(
            service,
            repo,
            package,
            "approved" if decision == "approve" else "rejected",
            by=reviewer,
            ref=ref,
            note=note,
        )
    what = "published with its draft" if decision == "approve" else "kept without the prose"
    say(f"{card.name} ({card.package}) at {card.commit[:12]}: {card.status} by {reviewer}, {what}")


@app.command()
def approve(
    package: str = typer.Argument(..., help="The queued card's package (path or name)."),
    repo: str = typer.Option(..., "--repo", help="The repository."),
    ref: str = typer.Option("main", help="The ref."),
    by: str | None = typer.Option(None, help="Who decides (default: cli:<login name>)."),
    note: str = typer.Option("", help="Why (kept with the decision)."),
) -> None:
    """Publish a queued card's draft (the exact gate must still pass it): a new version."""
    _decide(repo, ref, package, "approve", by, note)


@app.command()
def reject(
    package: str = typer.Argument(..., help="The queued card's package (path or name)."),
    repo: str = typer.Option(..., "--repo", help="The repository."),
    ref: str = typer.Option("main", help="The ref."),
    by: str | None = typer.Option(None, help="Who decides (default: cli:<login name>)."),
    note: str = typer.Option("", help="Why (kept with the decision)."),
) -> None:
    """Take a queued card out of the queue without its draft: a new version, nothing lost."""
    _decide(repo, ref, package, "reject", by, note)

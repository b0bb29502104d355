"""`strata context`: a task's context pack, as markdown for a prompt or as JSON."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer

from strata.cli.console import settings
from strata.cli.search import _time


class Format(StrEnum):
    markdown = "markdown"
    json = "json"


def context(
    task: str = typer.Argument(..., help="The task, in words (e.g. 'who calls Cart.total?')."),
    repo: str = typer.Option(..., "--repo", help="The indexed repository."),
    budget: int = typer.Option(500, "--budget", help="Token budget (50..20000, cl100k_base)."),
    fmt: Format = typer.Option(Format.markdown, "--format", help="markdown or json."),
    source: Path | None = typer.Option(
        None,
        "--source",
        help="The repository's git directory, for code lines and statement outlines "
        "(default: its registered path, its mirror, or the clone `strata index` read).",
    ),
    valid_at: str | None = typer.Option(None, help="As of this valid time (ISO 8601)."),
    known_at: str | None = typer.Option(None, help="As of this transaction time (ISO 8601)."),
) -> None:
    """A context pack for a task: routed, gathered, gated, cited, within the budget."""
    from strata.context.builder import ContextBuilder
    from strata.context.sources import git_blobs
    from strata.graph.gateway import Gateway
    from strata.locations import repository_git
    from strata.ontology import load_ontology
    from strata.search.docs import SearchIndex, embedder_for
    from strata.search.service import SearchService
    from strata.temporal import AsOf

    s = settings()
    as_of = AsOf.at(_time(valid_at, "--valid-at"), _time(known_at, "--known-at"))
    with Gateway.connect(s) as gateway:
        found = repository_git(gateway, s.mirrors_dir)
        locate = (lambda _name: source) if source is not None else found
        search = SearchService(gateway, SearchIndex(gateway, embedder_for(s)))
        builder = ContextBuilder(gateway, load_ontology(s.ontology_dir), search, git_blobs(locate))
        pack = builder.build(task, repo, budget_tokens=budget, as_of=as_of)
    if fmt is Format.json:
        print(json.dumps(pack.to_dict(), indent=2))
        return
    print(pack.markdown())
    verdict = "sufficient" if pack.sufficient else "insufficient: " + "; ".join(pack.reasons)
    print(f"\n<!-- {pack.tokens}/{pack.budget} tokens, {pack.dropped} lines dropped, {verdict} -->")

"""`strata search`: hybrid search from the shell, readable on a terminal and in a pipe."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from enum import StrEnum
from typing import Any

import typer
from rich.console import Console
from rich.table import Column, Table

from strata.cli.console import settings
from strata.errors import ValidationError
from strata.graph.gateway import Gateway
from strata.search.docs import SearchIndex, embedder_for
from strata.search.service import SearchHit, SearchResult, SearchService
from strata.temporal import AsOf


class Format(StrEnum):
    table = "table"
    json = "json"
    compact = "compact"


def search(
    query: str = typer.Argument(..., help="Words, an identifier, or a question."),
    repo: str = typer.Option(..., "--repo", help="The repository to search."),
    first: int = typer.Option(10, min=1, max=50, help="How many hits."),
    kind: list[str] | None = typer.Option(None, help="Only these kinds (repeatable)."),
    layer: list[str] | None = typer.Option(None, help="code and/or knowledge (repeatable)."),
    ref: str | None = typer.Option(None, help="Only this ref."),
    valid_at: str | None = typer.Option(None, help="As of this valid time (ISO 8601)."),
    known_at: str | None = typer.Option(None, help="As of this transaction time (ISO 8601)."),
    fmt: Format = typer.Option(Format.table, "--format", help="table, json or compact."),
    embed: bool = typer.Option(
        False, "--embed", help="First embed every document not embedded yet (vectors)."
    ),
) -> None:
    """Search a repository: full text, vectors and graph proximity, fused by rank."""
    s = settings()
    with Gateway.connect(s) as gateway:
        index = SearchIndex(gateway, embedder_for(s))
        service = SearchService(gateway, index)
        if embed:
            service.require_repository(repo, None)
            synced = index.sync(repo, embed_budget=None)
            print(
                f"indexed {synced.documents} documents in {synced.write_s:.2f}s, "
                f"embedded {synced.embedded} in {synced.embed_s:.2f}s",
                file=sys.stderr,
            )
        result = service.search(
            query,
            repo,
            layers=layer or None,
            kinds=kind or None,
            first=first,
            ref=ref,
            as_of=AsOf.at(_time(valid_at, "--valid-at"), _time(known_at, "--known-at")),
        )
    if fmt is Format.json:
        print(json.dumps(as_json(result), indent=2))
    elif fmt is Format.compact:
        for hit in result.hits:
            print(compact(hit))
    else:
        _table(result)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)


def _time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValidationError(f"{option} must be an ISO 8601 time, got {value!r}") from exc


def _why(hit: SearchHit) -> str:
    return " ".join(f"{m.retriever}#{m.rank}" for m in hit.matches)


def _where(hit: SearchHit) -> str:
    ev = hit.evidence
    lines = f":{ev.line_start}" if ev.line_start else ""
    if ev.line_end and ev.line_end != ev.line_start:
        lines += f"-{ev.line_end}"
    return f"{ev.path}{lines}"


def compact(hit: SearchHit) -> str:
    """One line per hit: score, kind, name, where, commit, why (tab-separated)."""
    commit = (hit.evidence.commit or "")[:12]
    return "\t".join(
        [f"{hit.score:.4f}", hit.kind, hit.qualified_name, _where(hit), commit, _why(hit)]
    )


def as_json(result: SearchResult) -> dict[str, Any]:
    return {
        "query": result.query,
        "repository": result.repository,
        "retrievers": list(result.retrievers),
        "pending_embeddings": result.pending_embeddings,
        "notes": result.notes,
        "hits": [
            {
                "id": h.key,
                "kind": h.kind,
                "qualified_name": h.qualified_name,
                "score": h.score,
                "summary": h.summary,
                "matches": [
                    {"retriever": m.retriever, "rank": m.rank, "score": m.score, "via": m.via}
                    for m in h.matches
                ],
                "evidence": {
                    "path": h.evidence.path,
                    "line_start": h.evidence.line_start,
                    "line_end": h.evidence.line_end,
                    "commit": h.evidence.commit,
                },
            }
            for h in result.hits
        ],
    }


def _table(result: SearchResult) -> None:
    # Not a terminal: no width limit, so a pipe gets every column whole.
    out = Console() if sys.stdout.isatty() else Console(width=10_000, no_color=True)
    # On a narrow terminal names and paths wrap whole instead of ending in "…".
    table = Table(
        "score",
        "kind",
        Column("name", overflow="fold"),
        Column("where", overflow="fold"),
        "commit",
        "why",
        box=None,
    )
    for hit in result.hits:
        table.add_row(
            f"{hit.score:.4f}",
            hit.kind,
            hit.qualified_name,
            _where(hit),
            (hit.evidence.commit or "")[:12],
            _why(hit),
        )
    out.print(table)

"""`strata search`: hybrid search from the shell, readable on a terminal and in a pipe."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

import typer

from strata.cli.console import settings
from strata.cli.output import Format, compact_line, note, print_compact, print_json, print_table
from strata.errors import ValidationError

if TYPE_CHECKING:
    from strata.search.service import SearchHit, SearchResult

HEADERS = ("score", "kind", "name", "where", "commit", "why")
FILE_HEADERS = ("score", "path", "best hits")


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
    files: bool = typer.Option(
        False, "--files", help="Rank files instead of hits: where would this change be made?"
    ),
) -> None:
    """Search a repository: full text, vectors and graph proximity, fused by rank."""
    from strata.graph.gateway import Gateway
    from strata.search.docs import SearchIndex, embedder_for
    from strata.search.service import SearchService
    from strata.temporal import AsOf

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
        print_json(as_json(result, first))
    elif files:
        rows = ([f"{f.score:.4f}", f.path, " ".join(f.keys[:3])] for f in result.files[:first])
        if fmt is Format.compact:
            print_compact(rows)
        else:
            print_table(FILE_HEADERS, rows, fold=("path", "best hits"))
    elif fmt is Format.compact:
        print_compact(_cells(hit) for hit in result.hits)
    else:
        print_table(HEADERS, (_cells(hit) for hit in result.hits), fold=("name", "where"))
    for remark in result.notes:
        note(remark)


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


def _cells(hit: SearchHit) -> list[str]:
    commit = (hit.evidence.commit or "")[:12]
    return [f"{hit.score:.4f}", hit.kind, hit.qualified_name, _where(hit), commit, _why(hit)]


def compact(hit: SearchHit) -> str:
    """One line per hit: score, kind, name, where, commit, why (tab-separated)."""
    return compact_line(_cells(hit))


def as_json(result: SearchResult, first: int = 10) -> dict[str, Any]:
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
        "files": [
            {"path": f.path, "score": f.score, "hit_ids": list(f.keys)}
            for f in result.files[:first]
        ],
    }

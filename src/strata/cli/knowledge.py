"""`strata knowledge`: ingest documents through the language model (opt-in: it costs calls).

``ingest PATH`` runs in this process against a local clone (like ``strata
index``); ``enqueue REPO`` asks the running API to queue the knowledge worker
and can follow the job.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from strata.cli.api import API_KEY, URL, follow_job, mutate
from strata.cli.console import console, err_console, say, settings

app = typer.Typer(help="Documents through graphiti: ingest, or queue an ingest.")

ENQUEUE = """
mutation($repository: String!, $paths: [String!], $ref: String) {
  ingestDocuments(repository: $repository, paths: $paths, ref: $ref) { id state ref after }
}
"""


@app.command()
def ingest(
    path: Path = typer.Argument(..., help="A local git clone (bare or with a work tree)."),
    repo: str | None = typer.Option(None, help="Repository name (default: the folder name)."),
    rev: str = typer.Option("HEAD", help="The commit (or ref) whose documents to ingest."),
    glob: list[str] = typer.Option(
        [],
        "--path",
        help="A glob of documents (repeatable; default: STRATA_KNOWLEDGE_DOCUMENT_GLOBS).",
    ),
) -> None:
    """Ingest a clone's documents in this process, with the configured model."""
    from strata.git import Git
    from strata.graph.gateway import Gateway
    from strata.knowledge.ingest import ingest_documents
    from strata.ontology import load_ontology
    from strata.registry import check_repo_name

    name = check_repo_name(repo or path.resolve().name.removesuffix(".git"))
    s = settings()
    git = Git(path)
    git.check()
    commit = git.resolve(rev)

    def report(phase: str, counters: dict[str, Any]) -> None:
        if phase == "selected":
            say(f"{counters['documents']} document(s) at {commit[:12]}")
        elif phase == "ingesting":
            say(
                f"  [{counters['done']}/{counters['documents']}] {counters['current']} "
                f"({counters.get('total_tokens', 0)} tokens so far)"
            )

    with Gateway.connect(s) as gateway:
        summary = ingest_documents(
            s,
            gateway,
            load_ontology(s.ontology_dir),
            git=git,
            repo=name,
            commit=commit,
            globs=glob or None,
            progress=report,
        )
    table = Table("document", "status", "dated", "entities", "facts", "closed", "tokens", "s")
    for o in summary.outcomes:
        table.add_row(
            o.path,
            o.status,
            o.reference_time.date().isoformat() if o.reference_time else "-",
            str(o.entities),
            str(o.facts),
            str(o.invalidated),
            str(o.tokens.get("total_tokens", 0)),
            f"{o.seconds:.1f}",
        )
    console.print(table)
    for failure in summary.failed:
        err_console.print(f"[red]failed[/] {failure['path']}: {failure['message']}")
    if summary.skipped:
        say("skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.skipped.items())))
    say(f"tokens: {summary.tokens.get('total_tokens', 0)} in {summary.seconds:.1f} s")
    if summary.failed:
        raise typer.Exit(1)


@app.command()
def enqueue(
    repository: str = typer.Argument(..., help="A registered repository."),
    glob: list[str] = typer.Option([], "--path", help="A glob of documents (repeatable)."),
    ref: str | None = typer.Option(None, help="Branch (default: the registered one)."),
    wait: bool = typer.Option(False, help="Follow the job until it finishes."),
    timeout: float = typer.Option(3600.0, help="Seconds to wait for the job."),
    url: str | None = URL,
    api_key: str | None = API_KEY,
) -> None:
    """Ask the knowledge worker (through the API) to ingest a repository's documents."""
    variables = {"repository": repository, "paths": glob or None, "ref": ref}
    job = mutate(ENQUEUE, variables, "ingestDocuments", url=url, api_key=api_key)
    say(f"job {job['id']} queued: documents of {repository} at {job['after'][:12]}")
    if not wait:
        return
    state = follow_job(job["id"], timeout=timeout, every_s=1.0, url=url, api_key=api_key)
    progress = state.get("progress") or {}
    say(
        f"[green]ingested[/] {repository}: {progress.get('documents', '?')} document(s), "
        f"{progress.get('total_tokens', 0)} tokens"
    )

"""Commands that talk to the running API: `strata graphql` and `strata reindex`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import typer

from strata.cli.client import ApiError, post, run_graphql
from strata.cli.console import console, err_console
from strata.cli.output import Format

__all__ = ["API_KEY", "URL", "ApiError", "follow_job", "graphql", "mutate", "post", "reindex"]

API_KEY = typer.Option(None, envvar="STRATA_API_KEY", help="API key (or STRATA_API_KEY).")
URL = typer.Option(None, help="API base URL (default: the local stack).")

REINDEX = """
mutation($repository: String!, $ref: String) {
  reindex(repository: $repository, ref: $ref) { id state ref after }
}
"""
JOB = "query($id: ID!) { job(id: $id) { id state progress error } }"


def graphql(
    query: str = typer.Argument(..., help="A GraphQL document, e.g. '{ version }'."),
    variables: str = typer.Option("{}", help="Variables as a JSON object."),
    fmt: Format = typer.Option(
        Format.json,
        "--format",
        help="json (the whole answer), table, or compact (one tab-separated line per row "
        "of the first list in the answer).",
    ),
    url: str | None = URL,
    api_key: str | None = API_KEY,
) -> None:
    """Send one GraphQL query to the running API and print the answer (exit 1 on errors)."""
    code = run_graphql(query, variables, fmt, url, api_key)
    if code:
        raise typer.Exit(code)


def reindex(
    repository: str = typer.Argument(..., help="A registered repository."),
    ref: str | None = typer.Option(None, help="Branch (default: the registered one)."),
    wait: bool = typer.Option(True, help="Follow the job until it finishes."),
    timeout: float = typer.Option(1800.0, help="Seconds to wait for the job."),
    url: str | None = URL,
    api_key: str | None = API_KEY,
) -> None:
    """Ask the code worker to index a repository (through the API) and follow the job."""
    job = mutate(
        REINDEX, {"repository": repository, "ref": ref}, "reindex", url=url, api_key=api_key
    )
    console.print(
        f"job {job['id']} queued: {repository} {job['ref']} at {job['after'][:12]}", highlight=False
    )
    if not wait:
        return
    state = follow_job(
        job["id"], timeout=timeout, every_s=0.5, describe=_describe, url=url, api_key=api_key
    )
    p = state.get("progress") or {}
    console.print(
        f"[green]indexed[/] {repository}: {p.get('files_written', '?')}/{p.get('files_total', '?')}"
        f" files, {p.get('symbols', '?')} symbols, {p.get('facts', '?')} facts",
        highlight=False,
    )


def _describe(state: dict[str, Any]) -> str:
    progress = state.get("progress") or {}
    phase = progress.get("phase", state["state"])
    counters = " ".join(
        f"{k}={v}" for k, v in progress.items() if k in ("files", "written", "total", "facts")
    )
    return f"{state['state']}: {phase} {counters}"


def mutate(
    query: str, variables: dict[str, Any], field: str, *, url: str | None, api_key: str | None
) -> Any:
    """Send one mutation; its ``field`` of the answer (GraphQL errors raise ApiError)."""
    answer = post(query, variables, url=url, api_key=api_key)
    if answer.get("errors"):
        raise ApiError("; ".join(e.get("message", "?") for e in answer["errors"]))
    return answer["data"][field]


def follow_job(
    job_id: str,
    *,
    timeout: float,
    every_s: float,
    url: str | None,
    api_key: str | None,
    describe: Callable[[dict[str, Any]], str] | None = None,
) -> dict[str, Any]:
    """Poll ``job(id)`` until it ends; the succeeded job's record (its ``state`` lower-case).

    ``describe`` (if given) drives a spinner with the job's progress. A failed job
    (including one whose worker was lost: the server fails a running job whose
    heartbeat stopped) prints its error and exits 1; a job that vanished, or is
    still running after ``timeout``, is an ApiError (exit 1 as well).
    """
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    deadline = time.monotonic() + timeout
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=describe is None,
    ) as bar:
        task = bar.add_task("queued")
        while True:
            answer = post(JOB, {"id": job_id}, url=url, api_key=api_key)
            if answer.get("errors"):
                raise ApiError("; ".join(e.get("message", "?") for e in answer["errors"]))
            state = (answer.get("data") or {}).get("job")
            if state is None:
                raise ApiError(
                    f"job {job_id} is gone (expired, or not visible to this key)",
                    hint="list recent jobs: `strata graphql '{ jobs(repository: ...) { id } }'`",
                )
            state["state"] = str(state["state"]).lower()
            if describe is not None:
                bar.update(task, description=describe(state))
            if state["state"] in ("succeeded", "failed"):
                break
            if time.monotonic() > deadline:
                raise ApiError(
                    f"job {job_id} still {state['state']} after {timeout:.0f}s",
                    hint="it may still finish; raise --timeout or follow it with `strata graphql`",
                )
            time.sleep(every_s)
    if state["state"] == "failed":
        _report_failure(state.get("error") or {})
        raise typer.Exit(1)
    return dict(state)


def _report_failure(error: dict[str, Any]) -> None:
    code = error.get("code", "")
    what = "job lost" if code == "worker_lost" else "job failed"
    label = f" ({code})" if code else ""
    err_console.print(f"[red]{what}{label}:[/] {error.get('message', error)}", highlight=False)
    if error.get("hint"):
        err_console.print(f"[yellow]hint:[/] {error['hint']}", highlight=False)

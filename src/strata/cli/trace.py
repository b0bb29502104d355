"""`strata trace check` (a CI gate) and `strata rebuild` (replay a repository)."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import typer
import yaml
from rich.table import Table

from strata.cli.console import console, err_console, say, settings
from strata.code.service import CodeService
from strata.errors import NotFound, ValidationError
from strata.git import Git, open_repository
from strata.graph.gateway import Gateway
from strata.ontology import load_ontology
from strata.rebuild import rebuild as replay
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata.temporal import AsOf
from strata.trace.reads import TraceReads

app = typer.Typer(help="Traceability: requirements, links, and the CI gate.", no_args_is_help=True)


def _scope(path: Path | None) -> tuple[set[str] | None, list[str]]:
    """Requirement ids and path globs a change declares (None: every requirement)."""
    if path is None:
        return None, []
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValidationError(f"cannot read the scope file {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ValidationError(f"{path}: a scope file is a mapping with `requirements` and `paths`")
    reqs = data.get("requirements")
    paths = data.get("paths") or []
    if reqs is not None and not (isinstance(reqs, list) and all(isinstance(r, str) for r in reqs)):
        raise ValidationError(f"{path}: `requirements` is a list of ids like REQ-001")
    if not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)):
        raise ValidationError(f"{path}: `paths` is a list of globs")
    return (set(reqs) if reqs is not None else None), paths


@app.command("check")
def check(
    repo: str = typer.Option(..., help="The indexed repository name."),
    scope: Path | None = typer.Option(None, help="YAML: `requirements: [...]`, `paths: [...]`."),
    base: str | None = typer.Option(None, help="Base revision of the change (for `paths`)."),
    path: Path = typer.Option(Path("."), help="The local clone (for `paths`)."),
) -> None:
    """Fail (exit 1) when a requirement in scope lacks an implementation or a verifying test,
    when one of its links is STALE, or when the change touches files outside the scope."""
    wanted, globs = _scope(scope)
    s = settings()
    with Gateway.connect(s) as gateway:
        report = TraceReads(gateway).report(repo, AsOf.at())
    problems: list[tuple[str, str]] = []

    def in_scope(req_id: str) -> bool:
        return wanted is None or req_id in wanted

    problems += [(r, "no implementation") for r in report.unimplemented if in_scope(r)]
    problems += [(r, "no verifying test") for r in report.untested if in_scope(r)]
    for link in report.stale:
        req_id = link.source_key.rsplit("|", 1)[-1]
        if in_scope(req_id):
            problems.append((req_id, f"STALE {link.type}: {link.link.get('evidence', '')}"))
    if globs and base:
        git = Git(path)
        changed = {c.path for c in git.diff(git.resolve(base), git.resolve("HEAD"))}
        outside = sorted(p for p in changed if not any(fnmatch.fnmatch(p, g) for g in globs))
        problems += [(p, "changed outside the declared scope") for p in outside]
    table = Table("requirement / file", "problem", title=f"trace check: {repo}")
    for subject, problem in problems:
        table.add_row(subject, problem)
    if problems:
        console.print(table)
        err_console.print(f"[red]{len(problems)} problem(s)[/]")
        raise typer.Exit(1)
    counted = wanted if wanted is not None else {"all"}
    say(
        f"[green]trace check passed[/] for {repo} ({report.requirements} requirements, "
        f"scope: {', '.join(sorted(counted))})"
    )


def rebuild(
    repository: str = typer.Argument(..., help="A registered repository."),
    ref: str | None = typer.Option(None, help="Branch (default: the registered one)."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
) -> None:
    """Drop the repository's projection and replay it from git (documents are kept)."""
    s = settings()
    with Gateway.connect(s) as gateway:
        registration = RepoRegistry(gateway, ServerKeys(s.secret_key.get_secret_value())).get(
            repository
        )
        if registration is None:
            raise NotFound(f"repository {repository!r} is not registered")
        if not yes:
            typer.confirm(f"drop and rebuild every fact of {repository}?", abort=True)
        git = open_repository(
            registration.name, url=registration.url, path=registration.path, mirrors=s.mirrors_dir
        )
        ontology = load_ontology(s.ontology_dir)
        service = CodeService(s, gateway, ontology)
        result = replay(
            gateway,
            ontology,
            service.indexer(),
            git,
            repo=repository,
            ref=ref or registration.default_branch,
        )
    say(
        f"[green]rebuilt[/] {repository}: {len(result.commits)} commit(s) replayed in "
        f"{result.seconds:.1f}s"
    )

"""`strata trace check` (a CI gate) and `strata rebuild` (replay a repository)."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import typer
from rich.table import Table

from strata.cli.console import console, err_console, say, settings
from strata.errors import NotFound, StrataError, ValidationError

app = typer.Typer(help="Traceability: requirements, links, and the CI gate.", no_args_is_help=True)


def _scope(path: Path | None) -> tuple[set[str] | None, list[str]]:
    """Requirement ids and path globs a change declares (None: every requirement).

    A scope that names nothing, or an id that is not shaped like ``REQ-001``, is
    a misconfigured gate, not an empty change: it is refused.
    """
    import yaml

    from strata.knowledge.requirements import REQ_ID

    if path is None:
        return None, []
    try:
        data = yaml.safe_load(path.read_text())
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
    if not reqs and not paths:
        raise ValidationError(
            f"{path}: the scope is empty (no `requirements`, no `paths`): nothing would be checked"
        )
    if reqs is not None and not reqs:
        raise ValidationError(f"{path}: `requirements` is empty: name the requirements in scope")
    malformed = sorted(r for r in reqs or [] if not REQ_ID.match(r))
    if malformed:
        raise ValidationError(
            f"{path}: malformed requirement id(s) {', '.join(malformed)}; ids look like REQ-001"
        )
    return (set(reqs) if reqs is not None else None), paths


@app.command("check")
def check(
    repo: str = typer.Option(..., help="The indexed repository name."),
    scope: Path | None = typer.Option(None, help="YAML: `requirements: [...]`, `paths: [...]`."),
    base: str | None = typer.Option(None, help="Base revision of the change (for `paths`)."),
    path: Path = typer.Option(Path("."), help="The local clone (for `paths`)."),
) -> None:
    """Fail (exit 1) when a requirement in scope lacks an implementation or a verifying test,
    when one of its links is STALE, when a trace file was refused (or a requirement
    dropped), or when the change touches files outside the scope. A misconfigured
    gate (unknown repository, undeclared or malformed ids, an empty scope) exits 2."""
    from strata.git import Git
    from strata.graph.gateway import Gateway
    from strata.temporal import AsOf
    from strata.trace.reads import TraceReads, findings

    try:
        wanted, globs = _scope(scope)
        s = settings()
        with Gateway.connect(s) as gateway:
            now = AsOf.at()
            report = TraceReads(gateway).report(repo, now)
            errors = findings(gateway, repo, now, severity="error", first=1000)
        _check_config(repo, report.declared, wanted)
    except StrataError as exc:
        err_console.print(f"[bold red]error:[/] {exc.message}", highlight=False)
        raise typer.Exit(2) from None
    problems: list[tuple[str, str]] = []

    def in_scope(req_id: str) -> bool:
        return wanted is None or req_id in wanted

    problems += [(r, "no implementation") for r in report.unimplemented if in_scope(r)]
    problems += [(r, "no verifying test") for r in report.untested if in_scope(r)]
    for link in report.stale:
        req_id = link.source_key.rsplit("|", 1)[-1]
        if in_scope(req_id):
            problems.append((req_id, f"STALE {link.type}: {link.link.get('evidence', '')}"))
    # A refused trace file (or a dropped requirement) means the graph is not what the
    # repository says: the gate cannot vouch for it.
    problems += [
        (
            f"{f.state.get('path')}:{f.state.get('line')}",
            f"{f.layer} {f.state.get('rule')}: {f.state.get('message')}",
        )
        for f in errors
    ]
    if globs and base:
        git = Git(path)
        changed = {c.path for c in git.diff(git.resolve(base), git.resolve("HEAD"))}
        outside = sorted(p for p in changed if not any(fnmatch.fnmatch(p, g) for g in globs))
        problems += [(p, "changed outside the declared scope") for p in outside]
    suspects = [v for v in report.suspect if in_scope(v.source_key.rsplit("|", 1)[-1])]
    for link in suspects:
        err_console.print(
            f"[yellow]suspect:[/] {link.type} {link.source_key.rsplit('|', 1)[-1]} -> "
            f"{link.target_key.split('|', 2)[-1]}: target changed at commit "
            f"{str(link.link.get('suspect_commit', '?'))[:12]}; review the link",
            highlight=False,
        )
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


def _check_config(repo: str, declared: list[str], wanted: set[str] | None) -> None:
    """Refuse a gate that would pass because it checks nothing."""
    if not declared:
        raise NotFound(
            f"repository {repo!r} declares no requirements: an unknown repository, "
            "one not indexed yet, or one without requirement files; nothing to check",
            repo=repo,
        )
    undeclared = sorted((wanted or set()) - set(declared))
    if undeclared:
        raise ValidationError(
            f"the scope names requirement(s) {repo!r} does not declare: {', '.join(undeclared)}"
        )


def rebuild(
    repository: str = typer.Argument(..., help="A registered repository."),
    ref: str | None = typer.Option(None, help="Branch (default: the registered one)."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
) -> None:
    """Drop the repository's projection and replay it from git (documents are kept)."""
    from strata.code.service import CodeService
    from strata.git import open_repository
    from strata.graph.gateway import Gateway
    from strata.ontology import load_ontology
    from strata.rebuild import rebuild as replay
    from strata.registry import RepoRegistry
    from strata.security import ServerKeys

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

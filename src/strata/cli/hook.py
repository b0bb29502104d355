"""`strata hook install`: a git post-commit hook that asks the running service for an
incremental run (a reindex from the last indexed commit; the knowledge worker then
rebuilds only the cards whose sources changed)."""

from __future__ import annotations

import shlex
import stat
import sys
from pathlib import Path

import typer

from strata.cli.console import say

app = typer.Typer(help="Git hooks that keep the cards fresh.", no_args_is_help=True)

MARKER = "# strata post-commit hook"


def hook_script(repository: str, strata: str, url: str | None) -> str:
    """The hook: one background `strata reindex --no-wait`; it never blocks or fails a commit
    (the key comes from STRATA_API_KEY, as for every API command)."""
    args = [strata, "reindex", repository, "--no-wait"]
    if url:
        args += ["--url", url]
    command = " ".join(shlex.quote(a) for a in args)
    return (
        "#!/bin/sh\n"
        f"{MARKER} (written by `strata hook install`; remove this file to stop it)\n"
        "# Asks the running Strata service for an incremental reindex of this repository;\n"
        "# its knowledge worker rebuilds only the cards whose sources the commit changed.\n"
        'log="$(git rev-parse --git-dir)/strata-hook.log"\n'
        f'( {command} >>"$log" 2>&1 & )\n'
        "exit 0\n"
    )


def hooks_dir(clone: Path) -> Path:
    """Where git reads this clone's hooks (core.hooksPath and worktrees respected)."""
    from strata.errors import GitError, ValidationError
    from strata.git.runner import run_git

    try:
        found = Path(run_git("rev-parse", "--git-path", "hooks", repo=clone).decode().strip())
    except GitError as exc:
        raise ValidationError(f"{clone} is not a git clone", hint=exc.message) from None
    return found if found.is_absolute() else clone / found


@app.command()
def install(
    repository: str = typer.Argument(..., help="The repository's name in Strata."),
    path: Path = typer.Option(Path("."), help="The clone to install the hook into."),
    url: str | None = typer.Option(None, help="API base URL (default: the local stack)."),
    force: bool = typer.Option(False, help="Replace a post-commit hook strata did not write."),
) -> None:
    """Write .git/hooks/post-commit: each commit asks the service for an incremental run."""
    from strata.errors import ValidationError

    directory = hooks_dir(path.resolve())
    target = directory / "post-commit"
    if target.exists() and MARKER not in target.read_text(errors="replace") and not force:
        raise ValidationError(
            f"{target} exists and was not written by strata",
            hint="add the strata line to it yourself, or pass --force to replace it",
        )
    local = Path(sys.executable).parent / "strata"
    strata = str(local) if local.exists() else "strata"
    directory.mkdir(parents=True, exist_ok=True)
    target.write_text(hook_script(repository, strata, url))
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    say(f"installed {target}: each commit asks for a reindex of {repository}")

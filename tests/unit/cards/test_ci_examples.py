"""The CI examples under docs/ci parse, and every `strata` command they run exists."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from strata.cli.main import app
from strata.settings import PROJECT_ROOT

CI = PROJECT_ROOT / "docs" / "ci"


def commands(document: Any) -> list[str]:
    """Every shell line of the document that runs strata."""
    found: list[str] = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key in ("run", "script", "before_script") and value is not None:
                lines = value if isinstance(value, list) else str(value).splitlines()
                found += [line for line in lines if line.strip().startswith("strata ")]
            else:
                found += commands(value)
    elif isinstance(document, list):
        for item in document:
            found += commands(item)
    return found


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml"])
def test_every_strata_command_exists(name: str) -> None:
    lines = commands(yaml.safe_load((CI / name).read_text()))
    words = {tuple(shlex.split(line)[1:3]) for line in lines}
    assert ("cards", "verify") in words  # the gate is what fails the job
    for line in lines:
        argv = shlex.split(line)[1:]
        command = argv[:2] if argv[0] in ("cards", "hook") else argv[:1]
        done = CliRunner().invoke(app, [*command, "--help"])
        assert done.exit_code == 0, (line, done.output)


def test_the_examples_are_in_the_docs() -> None:
    assert sorted(p.name for p in Path(CI).glob("*.yml")) == ["github-actions.yml", "gitlab-ci.yml"]

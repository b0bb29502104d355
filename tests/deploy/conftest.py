"""Shared helpers of the deployment tests: the cached tools and the settings contract.

The tools (helm, composecheck) are built by scripts/validate-deploy into
var/cache/deploy/bin, which scripts/test runs before pytest; a test that needs
one is skipped, with the command to run, only when it is not there.
"""

from __future__ import annotations

import subprocess
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from strata.settings import PROJECT_ROOT, Settings

TOOLS_BIN = PROJECT_ROOT / "var" / "cache" / "deploy" / "bin"
CHART = PROJECT_ROOT / "helm" / "strata"

# STRATA_* variables a deployment may set that are not settings: each is read
# by one process directly, for the reason given.
PROCESS_VARIABLES = {
    "STRATA_WORKER_READY_FILE": "strata_workers.main writes it once the worker consumes its queue",
}


def setting_variables() -> set[str]:
    """Every environment variable the Settings class reads."""
    return {f"STRATA_{name.upper()}" for name in Settings.model_fields}


def secret_variables() -> set[str]:
    """The variables of the SecretStr settings: they must never sit in plain config."""
    secrets = set()
    for name, field in Settings.model_fields.items():
        annotation = field.annotation
        if annotation is SecretStr or SecretStr in typing.get_args(annotation):
            secrets.add(f"STRATA_{name.upper()}")
    return secrets


def tool(name: str) -> Path:
    """The cached tool, or a skip that says how to install it."""
    path = TOOLS_BIN / name
    if not path.is_file():
        pytest.skip(f"{name} is not installed: run scripts/validate-deploy (it builds {path})")
    return path


class RenderError(Exception):
    """helm template refused the values."""


class Manifests:
    """The documents `helm template` rendered, with lookups by kind and name."""

    def __init__(self, documents: list[dict[str, Any]]) -> None:
        self.documents = documents

    def kind(self, kind: str) -> list[dict[str, Any]]:
        return [doc for doc in self.documents if doc["kind"] == kind]

    def get(self, kind: str, name: str) -> dict[str, Any]:
        for doc in self.kind(kind):
            if doc["metadata"]["name"] == name:
                return doc
        raise KeyError(f"no {kind} named {name}")

    def workloads(self) -> list[dict[str, Any]]:
        """Deployments and Jobs: every object with a pod template."""
        return self.kind("Deployment") + self.kind("Job")

    def containers(self) -> list[tuple[str, dict[str, Any]]]:
        """(workload name, container) for every container of every pod template."""
        return [
            (doc["metadata"]["name"], container)
            for doc in self.workloads()
            for container in doc["spec"]["template"]["spec"]["containers"]
        ]


class Chart:
    """Renders helm/strata with the cached helm binary."""

    def __init__(self, helm: Path, tmp: Path) -> None:
        self.helm = helm
        self.tmp = tmp
        self.minimal: dict[str, Any] = yaml.safe_load(
            (CHART / "ci" / "defaults-values.yaml").read_text()
        )

    def render(
        self, values: dict[str, Any] | None = None, *files: Path, minimal: bool = True
    ) -> Manifests:
        """Render with the minimal values, then the files, then `values` on top."""
        args = [str(self.helm), "template", "strata", str(CHART), "--namespace", "strata"]
        paths = [self._write(self.minimal)] if minimal else []
        paths += list(files)
        if values is not None:
            paths.append(self._write(values))
        for path in paths:
            args += ["-f", str(path)]
        result = subprocess.run(args, capture_output=True, text=True, check=False, timeout=120)
        if result.returncode != 0:
            raise RenderError(result.stderr.strip())
        documents = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
        return Manifests(documents)

    def refusal(self, values: dict[str, Any], *, minimal: bool = True) -> str:
        """The error message of a render that must fail."""
        with pytest.raises(RenderError) as caught:
            self.render(values, minimal=minimal)
        return str(caught.value)

    def _write(self, values: dict[str, Any]) -> Path:
        path = self.tmp / f"values-{len(list(self.tmp.iterdir()))}.yaml"
        path.write_text(yaml.safe_dump(values))
        return path


@pytest.fixture(scope="session")
def chart(tmp_path_factory: pytest.TempPathFactory) -> Chart:
    return Chart(tool("helm"), tmp_path_factory.mktemp("values"))


@pytest.fixture(scope="session")
def defaults(chart: Chart) -> Manifests:
    """The chart rendered with only the minimum an operator must set."""
    return chart.render()

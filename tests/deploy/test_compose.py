"""docker-compose.yml, compose.dev.yaml, .env.example and the Dockerfile, as compose reads them."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from strata.settings import PROJECT_ROOT, Settings
from tests.deploy.conftest import PROCESS_VARIABLES, secret_variables, setting_variables, tool

COMPOSE = PROJECT_ROOT / "docker-compose.yml"
DEV_OVERLAY = PROJECT_ROOT / "compose.dev.yaml"
ENV_EXAMPLE = PROJECT_ROOT / ".env.example"
DOCKERFILE = PROJECT_ROOT / "Dockerfile"
REQUIRED_SECRETS = ("STRATA_NEO4J_PASSWORD", "STRATA_SECRET_KEY")
TASK_TIME_LIMIT_S = Settings.model_fields["task_time_limit_s"].default
QUEUES = {
    Settings.model_fields[f"queue_{layer}"].default for layer in ("code", "knowledge", "trace")
}
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$")


def _seconds(duration: str) -> float:
    """A Go duration as compose-go prints it (1h2m0s) in seconds."""
    match = _DURATION.match(duration)
    assert duration, "empty duration"
    assert match, f"not a duration: {duration!r}"
    hours, minutes, seconds = (float(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


class Compose:
    """Runs composecheck (compose-go, the loader of `docker compose config`) without Docker."""

    def __init__(self, binary: Path, tmp: Path) -> None:
        self.binary = binary
        self.tmp = tmp

    def env_file(self, *, drop: tuple[str, ...] = ()) -> Path:
        """.env.example with the required secrets filled in, minus `drop`."""
        lines = []
        for line in ENV_EXAMPLE.read_text().splitlines():
            name = line.split("=", 1)[0]
            if name in drop:
                continue
            if name in REQUIRED_SECRETS and line == f"{name}=":
                lines.append(f"{name}=test-{name.lower()}-0123456789abcdef0123456789")
            else:
                lines.append(line)
        path = self.tmp / f"env-{len(list(self.tmp.iterdir()))}"
        path.write_text("\n".join(lines) + "\n")
        return path

    def run(self, *files: Path, env_file: Path) -> subprocess.CompletedProcess[str]:
        args = [str(self.binary), "-env-file", str(env_file), *map(str, files)]
        # An empty environment: exported STRATA_* variables must not leak in.
        return subprocess.run(
            args,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            cwd=PROJECT_ROOT,
            env={"PATH": os.environ.get("PATH", "")},
        )

    def project(self, *files: Path) -> dict[str, Any]:
        result = self.run(*files, env_file=self.env_file())
        assert result.returncode == 0, result.stderr
        project: dict[str, Any] = json.loads(result.stdout)
        return project


@pytest.fixture(scope="module")
def compose(tmp_path_factory: pytest.TempPathFactory) -> Compose:
    return Compose(tool("composecheck"), tmp_path_factory.mktemp("compose"))


@pytest.fixture(scope="module")
def production(compose: Compose) -> dict[str, Any]:
    services: dict[str, Any] = compose.project(COMPOSE)["services"]
    return services


@pytest.fixture(scope="module")
def development(compose: Compose) -> dict[str, Any]:
    services: dict[str, Any] = compose.project(COMPOSE, DEV_OVERLAY)["services"]
    return services


def _strata_services(services: dict[str, Any]) -> dict[str, Any]:
    """The services that run the Strata image (built from the Dockerfile)."""
    return {name: s for name, s in services.items() if "build" in s}


def _workers(services: dict[str, Any]) -> dict[str, Any]:
    return {
        name: s
        for name, s in services.items()
        if (s.get("command") or [])[:1] == ["celery"] and "worker" in s["command"]
    }


def _arg(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


class TestComposeSettings:
    """Every STRATA_* variable compose, .env.example and the image set is a field of Settings."""

    @pytest.mark.parametrize("overlay", [False, True], ids=["production", "development"])
    def test_service_environments(self, compose: Compose, overlay: bool) -> None:
        files = (COMPOSE, DEV_OVERLAY) if overlay else (COMPOSE,)
        services = compose.project(*files)["services"]
        for name, service in _strata_services(services).items():
            names = {n for n in service["environment"] if n.startswith("STRATA_")}
            unknown = names - setting_variables() - set(PROCESS_VARIABLES)
            assert not unknown, f"{name}: not fields of Settings: {unknown}"

    def test_env_example(self) -> None:
        names = set(re.findall(r"^#?\s*(STRATA_[A-Z0-9_]+)=", ENV_EXAMPLE.read_text(), re.M))
        assert set(REQUIRED_SECRETS) <= names
        assert names <= setting_variables(), names - setting_variables()

    def test_dockerfile_env(self) -> None:
        names = set(re.findall(r"\b(STRATA_[A-Z0-9_]+)=", DOCKERFILE.read_text()))
        assert {"STRATA_ONTOLOGY_DIR", "STRATA_MIGRATIONS_DIR"} <= names
        assert names <= setting_variables(), names - setting_variables()

    def test_production_by_default_development_in_the_overlay(
        self, production: dict[str, Any], development: dict[str, Any]
    ) -> None:
        for service in _strata_services(production).values():
            assert service["environment"]["STRATA_ENVIRONMENT"] == "production"
        for service in _strata_services(development).values():
            assert service["environment"]["STRATA_ENVIRONMENT"] == "development"

    def test_strata_and_neo4j_share_the_password(self, production: dict[str, Any]) -> None:
        password = production["api"]["environment"]["STRATA_NEO4J_PASSWORD"]
        assert production["neo4j"]["environment"]["NEO4J_AUTH"] == f"neo4j/{password}"
        assert production["api"]["environment"]["STRATA_NEO4J_URI"] == "bolt://neo4j:7687"
        assert production["api"]["environment"]["STRATA_REDIS_URL"].startswith("redis://redis:")


class TestComposeSecrets:
    """Required secrets come only from the environment, through ${VAR:?message}."""

    def test_every_reference_is_required_with_a_message(self) -> None:
        for path in (COMPOSE, DEV_OVERLAY):
            for name, rest in re.findall(r"\$\{(STRATA_[A-Z0-9_]+)([^}]*)\}", path.read_text()):
                if name in secret_variables():
                    assert rest.startswith(":?"), (path.name, name, rest)
                    assert len(rest) > 10, f"{name}: say how to set it"
        text = COMPOSE.read_text()
        for name in REQUIRED_SECRETS:
            assert f"${{{name}:?" in text

    def test_no_secret_has_a_literal_value(self) -> None:
        for path in (COMPOSE, DEV_OVERLAY):
            for service in (yaml.safe_load(path.read_text()).get("services") or {}).values():
                environment = service.get("environment") or {}
                for name in secret_variables() & set(environment):
                    assert str(environment[name]).startswith(f"${{{name}:?"), (path.name, name)

    def test_env_example_holds_no_secret(self) -> None:
        for line in ENV_EXAMPLE.read_text().splitlines():
            name, _, value = line.partition("=")
            if name.lstrip("# ") in secret_variables():
                assert value == "", f".env.example gives {name} a value"

    @pytest.mark.parametrize("secret", REQUIRED_SECRETS)
    def test_compose_refuses_to_start_without_it(self, compose: Compose, secret: str) -> None:
        result = compose.run(COMPOSE, env_file=compose.env_file(drop=(secret,)))
        assert result.returncode != 0
        assert f"required variable {secret} is missing a value" in result.stderr
        assert ".env.example" in result.stderr


class TestComposeHealth:
    """Every long-running service has a healthcheck; dependants wait until theirs are ready."""

    def test_long_running_services_have_healthchecks(self, production: dict[str, Any]) -> None:
        for name, service in production.items():
            if name == "migrate":
                continue
            healthcheck = service.get("healthcheck") or {}
            assert healthcheck.get("test"), name
            assert not healthcheck.get("disable"), name

    def test_migrate_is_one_shot_after_neo4j(self, production: dict[str, Any]) -> None:
        migrate = production["migrate"]
        assert migrate["command"] == ["strata", "migrate"]
        assert migrate["restart"] == "no"
        assert migrate["depends_on"]["neo4j"]["condition"] == "service_healthy"

    def test_api_and_workers_wait_for_their_dependencies(self, production: dict[str, Any]) -> None:
        expected = {
            "neo4j": "service_healthy",
            "redis": "service_healthy",
            "migrate": "service_completed_successfully",
        }
        for name in ["api", *_workers(production)]:
            conditions = {
                dep: spec["condition"] for dep, spec in production[name]["depends_on"].items()
            }
            assert conditions == expected, name

    def test_workers_are_healthy_when_their_ready_file_exists(
        self, production: dict[str, Any]
    ) -> None:
        for name, worker in _workers(production).items():
            ready_file = worker["environment"]["STRATA_WORKER_READY_FILE"]
            assert worker["healthcheck"]["test"] == ["CMD", "test", "-f", ready_file], name

    def test_api_health_is_healthz(self, production: dict[str, Any]) -> None:
        assert "/healthz" in " ".join(production["api"]["healthcheck"]["test"])


class TestComposeServices:
    """Neo4j 5.26 Community, Redis with AOF and noeviction, one warm-stopping worker per queue."""

    def test_neo4j(self, production: dict[str, Any]) -> None:
        neo4j = production["neo4j"]
        assert neo4j["image"] == "neo4j:5.26-community"
        data = [v for v in neo4j["volumes"] if v["target"] == "/data"]
        assert data
        assert data[0]["type"] == "volume"

    def test_redis_persists_and_never_evicts(self, production: dict[str, Any]) -> None:
        redis = production["redis"]
        assert redis["image"] == "redis:7"
        command = redis["command"]
        assert _arg(command, "--appendonly") == "yes"
        assert _arg(command, "--maxmemory-policy") == "noeviction"
        assert any(v["target"] == "/data" and v["type"] == "volume" for v in redis["volumes"])

    def test_one_worker_per_queue(self, production: dict[str, Any]) -> None:
        workers = _workers(production)
        assert {_arg(w["command"], "-Q") for w in workers.values()} == QUEUES
        for worker in workers.values():
            queue = _arg(worker["command"], "-Q")
            assert _arg(worker["command"], "-n") == f"{queue}@%h"

    def test_workers_outlast_the_longest_task_on_stop(self, production: dict[str, Any]) -> None:
        for name, worker in _workers(production).items():
            assert worker.get("stop_signal", "SIGTERM") == "SIGTERM"
            assert _seconds(worker["stop_grace_period"]) > TASK_TIME_LIMIT_S, name

    def test_strata_containers_are_hardened(self, production: dict[str, Any]) -> None:
        for name, service in _strata_services(production).items():
            assert service["read_only"] is True, name
            assert service["cap_drop"] == ["ALL"], name
            assert "no-new-privileges:true" in service["security_opt"], name
            assert "/tmp" in service["tmpfs"], name

    def test_only_the_api_is_published_and_on_loopback(self, production: dict[str, Any]) -> None:
        published = {name: s["ports"] for name, s in production.items() if s.get("ports")}
        assert list(published) == ["api"]
        assert published["api"][0]["host_ip"] == "127.0.0.1"


class TestDockerfile:
    """The image is multi-stage, non-root, starts in exec form, and checks its health."""

    def _instructions(self) -> list[tuple[str, str]]:
        text = DOCKERFILE.read_text().replace("\\\n", " ")
        lines = [line.strip() for line in text.splitlines()]
        return [
            (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
            for line in lines
            if line and not line.startswith("#")
        ]

    def _final_stage(self) -> list[tuple[str, str]]:
        instructions = self._instructions()
        start = max(i for i, (op, _) in enumerate(instructions) if op == "FROM")
        return instructions[start:]

    def test_multi_stage_from_a_slim_python_311(self) -> None:
        froms = [arg for op, arg in self._instructions() if op == "FROM"]
        assert len(froms) >= 3
        assert froms[0].startswith("python:3.11-slim")

    def test_installs_the_locked_project(self) -> None:
        runs = " ".join(arg for op, arg in self._instructions() if op == "RUN")
        assert '-c constraints.txt ".[api,workers,knowledge]"' in runs

    def test_final_stage_runs_as_a_non_root_user(self) -> None:
        users = [arg for op, arg in self._final_stage() if op == "USER"]
        assert users
        assert users[-1].split(":")[0] not in {"0", "root"}

    def test_process_starts_in_exec_form(self) -> None:
        stage = dict(self._final_stage())
        for op in ("ENTRYPOINT", "CMD"):
            assert isinstance(json.loads(stage[op]), list), op
        assert json.loads(stage["CMD"])[:3] == ["uvicorn", "--factory", "strata_api.main:create"]

    def test_healthcheck_probes_healthz(self) -> None:
        healthchecks = [arg for op, arg in self._final_stage() if op == "HEALTHCHECK"]
        assert len(healthchecks) == 1
        assert "/healthz" in healthchecks[0]
        assert "STRATA_WORKER_READY_FILE" in healthchecks[0]

    def test_no_build_tools_or_caches_in_the_final_stage(self) -> None:
        runs = " ".join(arg for op, arg in self._final_stage() if op == "RUN")
        assert "rm -rf /var/lib/apt/lists/*" in runs
        assert "pip uninstall -y pip" in runs
        for tool_name in ("build-essential", "gcc", "pip install"):
            assert tool_name not in runs

    def test_context_excludes_local_state(self) -> None:
        lines = (PROJECT_ROOT / ".dockerignore").read_text().splitlines()
        patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        assert patterns[0] == "*"  # everything out, then only what the build needs back in
        assert not any(p.startswith("!") and (".env" in p or "var" in p) for p in patterns)

"""`strata --help` and `strata graphql` load neither the graph driver nor a layer, and
not even typer's costly parts: rich for help, pydantic and typer for a query.

Each check runs the CLI in a fresh interpreter with ``-X importtime`` (which
lists every module a process imported, on stderr) and reads the list: no
timing, so it fails exactly when a heavy import creeps back into a command
module's top level.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest

from strata.cli import admin
from strata.registry import PROVIDERS

# The driver, the parsers, the layers and the settings machinery: none is needed to
# print help or to send one HTTP request.
HEAVY = (
    "neo4j",
    "tree_sitter",
    "strata.code",
    "strata.graph",
    "strata.search",
    "strata.context",
    "strata.knowledge",
    "strata.cards",
    "strata.trace",
    "graphiti_core",
)
RUN = "from strata.cli.main import main; main()"


def imported(
    *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `strata ARGS` with -X importtime: the process and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", RUN, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "80", **(env or {})},
    )
    modules = {
        m.group(1)
        for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$", done.stderr, re.M)
    }
    assert "strata.cli.main" in modules, done.stderr[-2000:]
    return done, modules


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))


def loaded(modules: set[str], *roots: str) -> list[str]:
    """The modules of these top-level packages that the process imported."""
    return sorted(m for m in modules if m.split(".")[0] in roots)


def cli_modules(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith("strata.cli."))


class _Answer(BaseHTTPRequestHandler):
    answer: ClassVar[dict[str, Any]] = {"data": {"version": "0.1.0"}}

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps(self.answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def http_answer() -> Iterator[str]:
    """A local HTTP endpoint that answers every POST with a fixed GraphQL answer."""
    server = HTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class TestStartUp:
    """The two commands an agent calls in a loop import only what they use."""

    def test_help_imports_no_driver_and_no_layer(self) -> None:
        done, modules = imported("--help")
        assert done.returncode == 0, done.stderr[-2000:]
        assert "graphql" in done.stdout
        assert heavy(modules) == []
        assert "pydantic_settings" not in modules
        assert "httpx" not in modules
        # Plain help from the lazy table: no rich, no pydantic, no command module.
        assert loaded(modules, "rich", "pydantic", "pydantic_core", "markdown_it") == []
        assert cli_modules(modules) == [
            "strata.cli.lazy",
            "strata.cli.main",
            "strata.cli.quick",
            "strata.cli.root",
        ]

    def test_subcommand_help_stays_light(self) -> None:
        for command in (["index", "--help"], ["trace", "check", "--help"], ["repo", "--help"]):
            done, modules = imported(*command)
            assert done.returncode == 0, done.stderr[-2000:]
            assert heavy(modules) == [], command

    def test_graphql_round_trip_is_an_http_client(self, http_answer: str) -> None:
        done, modules = imported("graphql", "{ version }", "--url", http_answer)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout) == {"data": {"version": "0.1.0"}}
        assert heavy(modules) == []
        # The quick path: the standard library's HTTP client, no typer, rich or pydantic.
        assert loaded(modules, "httpx", "typer", "rich", "pydantic", "pydantic_core") == []
        assert "http.client" in modules  # it did send the request
        assert cli_modules(modules) == [
            "strata.cli.answer",
            "strata.cli.client",
            "strata.cli.main",
            "strata.cli.output",
            "strata.cli.quick",
        ]

    def test_graphql_finds_the_api_without_the_settings_machinery(self, http_answer: str) -> None:
        host, port = http_answer.removeprefix("http://").split(":")
        address = {"STRATA_API_HOST": host, "STRATA_API_PORT": port}
        done, modules = imported("graphql", "{ version }", env=address)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout) == {"data": {"version": "0.1.0"}}
        assert loaded(modules, "pydantic", "pydantic_settings", "typer", "rich") == []

    def test_graphql_help_and_usage_errors_are_typers(self, http_answer: str) -> None:
        done, modules = imported("graphql", "--help")
        assert done.returncode == 0, done.stderr[-2000:]
        assert "--variables" in done.stdout
        assert "typer" in modules
        done, _ = imported("graphql", "{ version }", "--url", http_answer, "--no-such-flag")
        assert done.returncode == 2
        assert "No such option" in done.stderr


class TestProviderHelp:
    """The spelled-out provider list of `strata repo add --help` matches the registry."""

    def test_every_provider_is_named(self) -> None:
        named = re.findall(r"[a-z]+", admin.PROVIDER_HELP.split("(")[0].removeprefix("One of"))
        assert named == list(PROVIDERS)

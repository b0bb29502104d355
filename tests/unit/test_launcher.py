"""One launcher starts the API process for the dev stack, the benchmarks and the tests."""

from __future__ import annotations

import ast
import socket
import sys

import pytest

from strata.devstack.api import API_FACTORY, api_command, launch_api
from strata.devstack.procs import free_port
from strata.errors import EnvironmentProblem
from strata.settings import PROJECT_ROOT


class TestLauncher:
    """The command line is built in one place, and a process that dies is reported."""

    def test_command_line(self) -> None:
        argv = api_command("127.0.0.1", 8123, log_level="warning")
        assert argv[:5] == [sys.executable, "-m", "uvicorn", "--factory", API_FACTORY]
        assert argv[argv.index("--port") + 1] == "8123"
        assert "--no-access-log" in argv
        assert argv[-2:] == ["--log-level", "warning"]

    def test_a_process_that_cannot_serve_is_an_error(self) -> None:
        # The port is taken (bound, not answering HTTP): uvicorn exits, the launcher says so.
        port = free_port()
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", port))
            taken.listen()
            with pytest.raises(EnvironmentProblem, match="did not become healthy"):
                launch_api("127.0.0.1", port, timeout=30)

    def test_no_other_module_builds_the_uvicorn_command(self) -> None:
        # The Dockerfile's CMD (checked by tests/deploy) is an image's, not a launcher.
        launcher = PROJECT_ROOT / "src" / "strata" / "devstack" / "api.py"
        places = [
            PROJECT_ROOT / "tests" / "conftest.py",
            *(PROJECT_ROOT / "tests").glob("*/conftest.py"),
        ]
        for top in ("src", "services", "bench", "tests/integration"):
            places += (PROJECT_ROOT / top).rglob("*.py")
        builders = [
            str(path.relative_to(PROJECT_ROOT))
            for path in places
            if path != launcher
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and node.value == "uvicorn"
        ]
        assert builders == []

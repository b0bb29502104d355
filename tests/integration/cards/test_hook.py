"""`strata hook install`: a real commit runs the hook, which asks the service for a reindex."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from strata.cli.hook import MARKER
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.code.cli import cli


class FakeApi(BaseHTTPRequestHandler):
    """Answers the reindex mutation as the API does, keeping each request."""

    requests: ClassVar[list[tuple[dict[str, Any], str]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append((body, self.headers.get("Authorization", "")))
        answer = {
            "data": {
                "reindex": {"id": "job-1", "state": "QUEUED", "ref": "main", "after": "a" * 40}
            }
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def fake_api() -> Iterator[str]:
    FakeApi.requests.clear()
    server = HTTPServer(("127.0.0.1", 0), FakeApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_commit_asks_the_service_for_a_reindex(
    tmp_path: Path, settings: Settings, fake_api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = GitRepo(tmp_path / "hooked")
    repo.write("a.py", "x = 1\n")
    repo.commit("first", datetime(2025, 5, 1, tzinfo=UTC))
    done = cli(
        settings, "hook", "install", "hooked-repo", "--path", str(repo.path), "--url", fake_api
    )
    assert done.returncode == 0, done.stderr
    hook = repo.path / ".git" / "hooks" / "post-commit"
    assert MARKER in hook.read_text()
    assert hook.stat().st_mode & 0o111
    monkeypatch.setenv("STRATA_API_KEY", "sk-test-hook")
    repo.write("a.py", "x = 2\n")
    repo.commit("second", datetime(2025, 5, 2, tzinfo=UTC))  # git runs the hook
    deadline = time.monotonic() + 60
    while not FakeApi.requests and time.monotonic() < deadline:
        time.sleep(0.2)
    assert FakeApi.requests, (repo.path / ".git" / "strata-hook.log").read_text()
    body, auth = FakeApi.requests[0]
    assert "reindex(repository: $repository" in body["query"]
    assert body["variables"]["repository"] == "hooked-repo"
    assert auth == "Bearer sk-test-hook"
    # installing again replaces our own hook; a foreign hook needs --force
    assert cli(settings, "hook", "install", "hooked-repo", "--path", str(repo.path)).returncode == 0
    hook.write_text("#!/bin/sh\necho mine\n")
    refused = cli(settings, "hook", "install", "hooked-repo", "--path", str(repo.path))
    assert refused.returncode == 1
    assert "not written by strata" in refused.stderr
    assert hook.read_text() == "#!/bin/sh\necho mine\n"
    forced = cli(settings, "hook", "install", "x", "--path", str(repo.path), "--force")
    assert forced.returncode == 0
    assert MARKER in hook.read_text()

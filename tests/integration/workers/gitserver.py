"""A real git host for mirror tests: ``git daemon`` serving bare repositories on
127.0.0.1, so a registration has a clone URL (``git://``) the registry accepts and
the worker clones and fetches it the way it fetches any remote."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import free_port


@dataclass(frozen=True)
class GitHost:
    """Bare repositories under ``root``, served at ``git://127.0.0.1:<port>/<name>.git``."""

    root: Path
    port: int

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}.git"

    def bare(self, name: str) -> Path:
        """A new empty bare repository ``name`` on the host (push into it to publish)."""
        path = self.root / f"{name}.git"
        git("init", "-q", "--bare", "-b", "main", str(path))
        return path


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@contextmanager
def git_host(root: Path) -> Iterator[GitHost]:
    """``git daemon`` over ``root`` until the block ends."""
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={root}",
            str(root),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("git daemon did not start") from None
                time.sleep(0.1)
        yield GitHost(root, port)
    finally:
        proc.terminate()
        proc.wait(timeout=10)

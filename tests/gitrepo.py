"""A throwaway git repository for tests, with commits at chosen times."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path


class GitRepo:
    """Write files, commit them at a given date, and read the resulting shas."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self._git("init", "-q", "-b", "main")
        self._git("config", "user.email", "dev@example.com")
        self._git("config", "user.name", "Dev")
        self._git("config", "commit.gpgsign", "false")

    def _git(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.path), *args],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **(env or {})},
        )
        return done.stdout.strip()

    def write(self, rel: str, text: str | bytes) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text)

    def delete(self, rel: str) -> None:
        self._git("rm", "-q", rel)

    def rename(self, old: str, new: str) -> None:
        (self.path / new).parent.mkdir(parents=True, exist_ok=True)
        self._git("mv", old, new)

    def symlink(self, rel: str, target: str) -> None:
        (self.path / rel).symlink_to(target)

    def commit(self, message: str, when: datetime) -> str:
        self._git("add", "-A")
        stamp = when.isoformat()
        self._git(
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
            env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
        )
        return self._git("rev-parse", "HEAD")

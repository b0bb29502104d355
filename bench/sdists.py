"""What the benchmarks share: pinned sdists from the package index, and throwaway git repos.

A benchmark's third-party tree is a release sdist, downloaded once into
``bench/.cache`` with ``pip download`` and checked against the sha256 the
benchmark pins; its git history, when it needs one, is a throwaway repository
committed with a fixed identity and date.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"


def _named(directory: Path, project: str, version: str) -> list[Path]:
    """Sdists of ``project==version`` in ``directory`` (names normalised as the index does)."""
    want = f"{project}-{version}.tar.gz".lower().replace("_", "-")
    return [p for p in directory.glob("*.tar.gz") if p.name.lower().replace("_", "-") == want]


def download(project: str, version: str, directory: Path = CACHE) -> Path:
    """``project==version``'s sdist in ``directory`` (downloaded on first use)."""
    directory.mkdir(parents=True, exist_ok=True)
    if not _named(directory, project, version):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-q",
                "-d",
                str(directory),
                f"{project}=={version}",
            ],
            check=True,
        )
    found = _named(directory, project, version)
    if not found:
        raise SystemExit(f"pip downloaded no sdist of {project}=={version} into {directory}")
    return found[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(project: str, version: str, pinned: str, directory: Path = CACHE) -> Path:
    """The sdist, refused unless its sha256 is the one the benchmark pins."""
    archive = download(project, version, directory)
    digest = sha256(archive)
    if digest != pinned:
        raise SystemExit(f"{archive.name}: sha256 {digest}, the benchmark pins {pinned}")
    return archive


def git(repo: Path, *args: str, when: datetime | None = None) -> str:
    """``git -C repo ARGS`` as the bench identity (commits dated ``when``, if given)."""
    env = dict(os.environ)
    if when is not None:
        env |= {"GIT_AUTHOR_DATE": when.isoformat(), "GIT_COMMITTER_DATE": when.isoformat()}
    env |= {
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()


def commit_all(repo: Path, message: str, when: datetime) -> str:
    """Make ``repo`` a git repository (if it is not one) holding everything in it; the sha."""
    if not (repo / ".git").exists():
        git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, when=when)
    return git(repo, "rev-parse", "HEAD")

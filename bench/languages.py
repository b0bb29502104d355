"""Every language at scale: well-known projects from the package registries, indexed
by the CLI one after the other, each with a time limit.

The small fixtures of the tests cover each adapter's constructs; this bench covers
what only real trees hold. On its first run it found two faults the suite could not:
a Rust ``use std as tokio;`` failed tokio's whole index on a Module identity check,
and Kotlin packages (many files, each with wildcard imports of the same packages)
sent the resolver's re-export walk exponential: kotlinx.coroutines did not finish in
ten minutes. Each project is a release archive from a registry (crates.io, the Go
module proxy, Maven Central, npm, PyPI; C# from Unity packages on npm, PHP from
Debian's packages of the libraries), checked against the sha256 pinned here,
unpacked and committed into a throwaway git repository under the system's
temporary folder.

Needs the dev stack (``strata up``): the CLI writes into its Neo4j, each project as
a new repository (``lang-<project>-<random>``). Prints per project: exit, wall time,
the CLI's own peak RSS, files, lines, symbols, calls, facts and lines/s; a project
that fails or passes ``--timeout`` is printed as such, and the bench exits 1.

    .venv/bin/python bench/languages.py [--only tokio,guava] [--timeout 600]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import sdists  # bench/sdists.py: pinned sdists and throwaway git repositories

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".cache" / "languages"
WORK = Path(tempfile.gettempdir()) / (
    f"strata-languages-{os.getuid()}-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]}"
)
STRATA = str(ROOT / ".venv" / "bin" / "strata")
WHEN = datetime(2025, 11, 5, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Archive:
    url: str  # "pypi:<project>==<version>" for an sdist through pip, else an https URL
    sha256: str


@dataclass(frozen=True, slots=True)
class Project:
    name: str
    language: str
    archives: tuple[Archive, ...]


PROJECTS = (
    Project(
        "tokio",
        "rust",
        (
            Archive(
                "https://static.crates.io/crates/tokio/tokio-1.41.1.crate",
                "22cfb5bee7a6a52939ca9224d6ac897bb669134078daa8735560897f69de4d33",
            ),
        ),
    ),
    Project(
        "x-tools",
        "go",
        (
            Archive(
                "https://proxy.golang.org/golang.org/x/tools/@v/v0.28.0.zip",
                "3ac1c5530724296b8ed1f5b3df6c2aa1f6312371ab20812ad5fcb35ceaf2a177",
            ),
        ),
    ),
    Project(
        "guava",
        "java",
        (
            Archive(
                "https://repo1.maven.org/maven2/com/google/guava/guava/33.3.1-jre/"
                "guava-33.3.1-jre-sources.jar",
                "b7cbdad958b791f2a036abff7724570bf9836531c460966f8a3d0df8eaa1c21d",
            ),
        ),
    ),
    Project(
        "coroutines-okhttp",
        "kotlin",
        (
            Archive(
                "https://repo1.maven.org/maven2/org/jetbrains/kotlinx/kotlinx-coroutines-core-jvm/"
                "1.9.0/kotlinx-coroutines-core-jvm-1.9.0-sources.jar",
                "01e0f26a274d8f2f2ae702b161bc0980cea817bfcaf66ca4944434ea7b601771",
            ),
            Archive(
                "https://repo1.maven.org/maven2/com/squareup/okhttp3/okhttp/4.12.0/"
                "okhttp-4.12.0-sources.jar",
                "d91a769a4140e542cddbac4e67fcf279299614e8bfd53bd23b85e60c2861341c",
            ),
        ),
    ),
    Project(
        "rxjs",
        "typescript",
        (
            Archive(
                "https://registry.npmjs.org/rxjs/-/rxjs-7.8.1.tgz",
                "c532167725ab7d085123209156c93cef22f2479cb9c8527060f1cd903aa9d149",
            ),
        ),
    ),
    Project(
        "three",
        "javascript",
        (
            Archive(
                "https://registry.npmjs.org/three/-/three-0.170.0.tgz",
                "4a608a355dcaba72e0e5383cdc814303f5b6060b43c238cdf6932dceb699238d",
            ),
        ),
    ),
    Project(
        "unitask-unirx",
        "csharp",
        (
            Archive(
                "https://registry.npmjs.org/com.cysharp.unitask/-/com.cysharp.unitask-2.2.5.tgz",
                "dd89936982fc32a962ac09db926ee0bcc7ca2ab9a02c1553393031345aaf7d2f",
            ),
            Archive(
                "https://registry.npmjs.org/com.neuecc.unirx/-/com.neuecc.unirx-7.1.0.tgz",
                "df5dea1b6230cda196acebc148dc6ff44fb8c610652d89001c74172312cf2618",
            ),
        ),
    ),
    Project(
        "guzzle-phpseclib-symfony",
        "php",
        (  # Debian's packages of the libraries (their files under usr/share/php)
            Archive(
                "http://deb.debian.org/debian/pool/main/g/guzzle/php-guzzlehttp-guzzle_7.4.5-1_all.deb",
                "9d9bf1da6497cc3d6b3b1b28093a9ffd13621f6e2854ffd4f2d07d54fc836a06",
            ),
            Archive(
                "http://deb.debian.org/debian/pool/main/p/php-phpseclib3/"
                "php-phpseclib3_3.0.19-1%2bdeb12u6_all.deb",
                "0bb8c9a03ac30f90230d71cce6d5dd26fa0049cdc59f907a94ece2fe415417d6",
            ),
            Archive(
                "http://deb.debian.org/debian/pool/main/s/symfony/"
                "php-symfony-console_5.4.53%2bdfsg-0%2bdeb12u1_all.deb",
                "64bd4cbdd9556ee3fd212e444a8df4aa0af00e09c81abb8634eff819a7bab62b",
            ),
        ),
    ),
    Project(
        "sympy",
        "python",
        (
            Archive(
                "pypi:sympy==1.13.3",
                "b27fd2c6530e0ab39e275fc9b683895367e51d5da91baa8d3d64db2565fec4d9",
            ),
        ),
    ),
)
COLUMNS = ("files", "lines", "symbols", "calls", "facts", "lines/s")


def fetch(archive: Archive) -> Path:
    """The archive in bench/.cache/languages, refused unless its sha256 is the pinned one."""
    if archive.url.startswith("pypi:"):
        project, version = archive.url.removeprefix("pypi:").split("==")
        return sdists.fetch(project, version, archive.sha256, CACHE)
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / urllib.parse.unquote(archive.url.rsplit("/", 1)[-1])
    if not path.exists():
        with urllib.request.urlopen(archive.url, timeout=120) as answer:  # noqa: S310 - pinned https
            data = answer.read()
        path.write_bytes(data)
    digest = sdists.sha256(path)
    if digest != archive.sha256:
        raise SystemExit(f"{path.name}: sha256 {digest}, the bench pins {archive.sha256}")
    return path


def unpack(path: Path, into: Path) -> None:
    if path.suffix == ".deb":  # an ar archive: dpkg-deb (Debian's own) unpacks its data
        into.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", str(path), str(into)], check=True)
        return
    data = path.read_bytes()
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as zipped:
            zipped.extractall(into)  # noqa: S202 - pinned by sha256; zipfile drops ".." and "/"
        return
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        tar.extractall(into, filter="data")


def make_repo(project: Project) -> Path:
    repo = WORK / project.name
    if repo.exists():
        shutil.rmtree(repo)
    for n, archive in enumerate(project.archives):
        unpack(fetch(archive), repo / f"part{n}" if len(project.archives) > 1 else repo)
    sdists.commit_all(repo, f"{project.name} release", WHEN)
    return repo


@dataclass(slots=True)
class Outcome:
    status: str  # ok | failed (exit N) | timeout
    wall_s: float
    peak_rss_mb: float
    counts: dict[str, str]
    tail: str


def index(repo: Path, name: str, timeout_s: float) -> Outcome:
    """``strata index`` of ``repo`` as ``name``: its outcome, wall time and own peak RSS."""
    env = dict(os.environ, COLUMNS="240")
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            # In this process, not the index daemon: its own peak RSS is the index's,
            # and the time limit's kill stops the index itself.
            [STRATA, "index", str(repo), "--repo", name, "--no-daemon"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        status, rss_kb = None, 0
        while status is None:
            pid, waited, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status, rss_kb = os.waitstatus_to_exitcode(waited), usage.ru_maxrss
                proc.returncode = status
            elif time.perf_counter() - started > timeout_s:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                time.sleep(0.1)
        wall = time.perf_counter() - started
        out.seek(0)
        text = out.read()
    verdict = "ok" if status == 0 else f"failed (exit {status})"
    verdict = "timeout" if wall > timeout_s else verdict
    return Outcome(verdict, wall, rss_kb / 1024, _counts(text), text.strip()[-600:])


def _counts(text: str) -> dict[str, str]:
    """The numbers of the CLI's summary table (its header row names the columns)."""
    header: list[str] = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("┃│").replace("┃", "│").split("│")]
        if "commit" in cells and "lines/s" in cells:
            header = cells
        elif header and len(cells) == len(header) and cells[0] and cells[0] != "commit":
            return dict(zip(header, cells, strict=True))
    return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated project names")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per project")
    args = parser.parse_args()
    chosen = [p for p in PROJECTS if not args.only or p.name in args.only.split(",")]
    if not chosen:
        raise SystemExit(f"no project named {args.only!r}: {[p.name for p in PROJECTS]}")
    rows: list[tuple[Project, Outcome]] = []
    for project in chosen:
        repo = make_repo(project)
        name = f"lang-{project.name}-{uuid.uuid4().hex[:6]}"
        print(f"[languages] {project.name} ({project.language}) as {name}", flush=True)
        outcome = index(repo, name, args.timeout)
        if outcome.status != "ok":
            print(outcome.tail, flush=True)
        rows.append((project, outcome))
    print()
    head = ("project", "language", "status", "wall s", "RSS MB", *COLUMNS)
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for project, outcome in rows:
        cells = [
            project.name,
            project.language,
            outcome.status,
            f"{outcome.wall_s:.2f}",
            f"{outcome.peak_rss_mb:.0f}",
            *(outcome.counts.get(c, "-") for c in COLUMNS),
        ]
        print(" | ".join(cells))
    if any(outcome.status != "ok" for _, outcome in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()

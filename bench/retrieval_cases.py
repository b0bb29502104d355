"""Build retrieval cases from a real project's history (how tests/fixtures/retrieval/ was made).

For each pair of consecutive release tags (R, R'), every non-merge commit
between them that changes the project's source (not its tests) becomes a
case: the commit's subject is the query; the gold is the files it changed and
the innermost functions or methods its hunks touch, read in the parent tree.
The tree a case runs against is the release sdist of R (the release before the
fix), pinned by sha256; a case is kept only if all its gold files and symbols
exist in that sdist, so the harness can run offline from the sdist alone.

    .venv/bin/python bench/retrieval_cases.py --mirror DIR --project click \
        --source-dir src/click --tags 8.1.7,8.1.8,8.2.0 --out tests/fixtures/retrieval/click.yaml
"""

from __future__ import annotations

import argparse
import itertools
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import sdists  # bench/sdists.py: pinned sdists and throwaway git repositories
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from strata.code.languages import parse_file  # noqa: E402 - after the path set-up

CACHE = ROOT / "bench" / ".cache" / "retrieval"
SKIP = re.compile(
    r"\b(release|bump|merge|typo|ruff|mypy|pre-commit|pyupgrade|flake8|black|isort|lint|"
    r"update project files|changelog|changes\.rst|docs?\b|documentation|type hints?|typing|"
    r"annotations?|revert|versions?|typos?|dependencies|cross-references?|reconcile|clean ?up|"
    r"pyright|style|formatting|wording|spelling)\b",
    re.IGNORECASE,
)
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)
PR_REF = re.compile(r"\s*\(#\d+\)\s*$")
FUNCTION_KINDS = ("function", "method")


def git(mirror: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(mirror), *args], check=True, capture_output=True, text=True
    )
    return done.stdout


def sdist(project: str, version: str) -> tuple[Path, str]:
    """The release's sdist (downloaded once into bench/.cache/retrieval) and its sha256."""
    archive = sdists.download(project, version, CACHE)
    return archive, sdists.sha256(archive)


def sdist_files(path: Path) -> tuple[str, dict[str, bytes]]:
    """The sdist's root folder and its .py files (path relative to the root -> bytes)."""
    files: dict[str, bytes] = {}
    with tarfile.open(path) as tar:
        root = tar.getmembers()[0].name.split("/")[0]
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".py"):
                handle = tar.extractfile(member)
                if handle is not None:
                    files[member.name[len(root) + 1 :]] = handle.read()
    return root, files


def qualnames(path: str, source: bytes) -> dict[str, tuple[int, int, str]]:
    extract = parse_file(path, source)
    return {s.qualname: (s.line_start, s.line_end, s.kind) for s in extract.symbols}


def touched(path: str, source: bytes, ranges: list[tuple[int, int]]) -> set[str]:
    """Innermost functions or methods that contain each old-side hunk range."""
    symbols = qualnames(path, source)
    out: set[str] = set()
    for first, last in ranges:
        best: tuple[int, str] | None = None
        for name, (start, end, kind) in symbols.items():
            if kind in FUNCTION_KINDS and start <= first and last <= end:
                span = end - start
                if best is None or span < best[0]:
                    best = (span, name)
        if best is not None:
            out.add(best[1])
    return out


def cases_for(
    mirror: Path, project: str, source_dir: str, tags: list[str], prefix: str = ""
) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for release, following in itertools.pairwise(tags):
        archive, digest = sdist(project, release.removeprefix(prefix))
        root, tree = sdist_files(archive)
        log = git(
            mirror,
            "log",
            "--no-merges",
            "--format=%H%x09%s",
            f"{release}..{following}",
            "--",
            source_dir,
        )
        for line in log.splitlines():
            sha, subject = line.split("\t", 1)
            query = PR_REF.sub("", subject).strip()
            if SKIP.search(query) or len(re.findall(r"[A-Za-z_]{2,}", query)) < 3:
                continue  # housekeeping, or too few words to be a question
            parent = f"{sha}^"
            changed = [
                p
                for p in git(
                    mirror, "diff", "--name-only", parent, sha, "--", source_dir
                ).splitlines()
                if p.endswith(".py")
            ]
            if not changed or any(p not in tree for p in changed):
                continue
            symbols: set[str] = set()
            for path in changed:
                diff = git(mirror, "diff", "-U0", parent, sha, "--", path)
                ranges = []
                for match in HUNK.finditer(diff):
                    start, count = int(match.group(1)), int(match.group(2) or "1")
                    ranges.append((max(start, 1), max(start, start + count - 1)))
                old = git(mirror, "show", f"{parent}:{path}").encode()
                found = touched(path, old, ranges)
                present = qualnames(path, tree[path])
                if any(q not in present for q in found):
                    symbols = set()
                    break
                symbols |= {f"{path}::{q}" for q in found}
            if not symbols:
                continue  # module-level only, or not in the release tree
            cases.append(
                {
                    "id": f"{project}-{sha[:10]}",
                    "query": query,
                    "commit": sha,
                    "tree": {"sdist": archive.name, "sha256": digest, "root": root},
                    "mode": "retrieval",
                    "gold": {"files": sorted(changed), "symbols": sorted(symbols)},
                }
            )
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True, help="a bare git mirror")
    parser.add_argument("--project", required=True, help="its name on the package index")
    parser.add_argument("--source-dir", required=True, help="the package folder, e.g. src/click")
    parser.add_argument("--tags", required=True, help="release tags, oldest first, comma-joined")
    parser.add_argument("--tag-prefix", default="", help="tags are PREFIX + version, e.g. v")
    parser.add_argument("--history", required=True, help="where the history came from (text)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    tags = [t.strip() for t in args.tags.split(",") if t.strip()]
    cases = cases_for(args.mirror, args.project, args.source_dir, tags, args.tag_prefix)
    document = {
        "project": args.project,
        "history": args.history,
        "trees": "the release sdists from the package index, pinned by sha256 per case",
        "made_by": "bench/retrieval_cases.py",
        "cases": cases,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(yaml.safe_dump(document, sort_keys=False, width=100))
    print(f"{len(cases)} cases -> {args.out}")


if __name__ == "__main__":
    main()

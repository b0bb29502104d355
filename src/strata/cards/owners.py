"""Package owners from a CODEOWNERS file at the commit (root, .github/ or docs/)."""

from __future__ import annotations

import fnmatch

from strata.git import Git

LOCATIONS = ("CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS")


def read_codeowners(git: Git, commit: str) -> str | None:
    """The text of the first CODEOWNERS file GitHub would read at the commit, if any."""
    entries = {e.path: e for e in git.tree(commit)}
    for location in LOCATIONS:
        entry = entries.get(location)
        if entry is not None:
            return git.blobs([entry.blob])[entry.blob].decode(errors="replace")
    return None


def parse_codeowners(text: str) -> list[tuple[str, list[str]]]:
    """(pattern, owners) rules in file order (comments and blank lines dropped)."""
    rules: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pattern, *owners = line.split()
        rules.append((pattern, owners))
    return rules


def owners_of(package: str, rules: list[tuple[str, list[str]]]) -> list[str]:
    """The owners of a package directory: the last matching rule wins (GitHub's order)."""
    target = "" if package in ("", ".") else package.strip("/")
    found: list[str] = []
    for pattern, owners in rules:
        if _matches(pattern, target):
            found = owners
    return found


def _matches(pattern: str, directory: str) -> bool:
    if pattern in ("*", "/*", "**", "/**"):
        return True
    anchored = pattern.startswith("/")
    stem = pattern.strip("/").removesuffix("/**").removesuffix("/*")
    if not stem:
        return True
    if anchored or "/" in stem:
        return (
            directory == stem
            or directory.startswith(stem + "/")
            or fnmatch.fnmatch(directory, stem)
        )
    parts = directory.split("/") if directory else []
    return any(fnmatch.fnmatch(part, stem) for part in parts)

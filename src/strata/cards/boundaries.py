"""A repository's own package boundaries for cards: ``.strata/packages.yml`` at the commit.

The code layer detects packages by their manifests (``pyproject.toml``,
``package.json``, ...). A repository that is one big package (Django: one
``pyproject.toml`` for 2,800 files) or whose teams own folders rather than
manifests says where its cards' boundaries are::

    # .strata/packages.yml
    replace: false          # true: only these packages (and the root) get cards
    packages:
      - path: django/db     # a folder: every file under it, unless a deeper package holds it
        name: django.db     # optional (default: the path)
        owners: ["@db-team"]  # optional: instead of what CODEOWNERS says

A file belongs to the deepest package whose folder holds it (mapped or
detected). The map a card was compiled under is written into its frontmatter
(``boundaries``) and into its sources, so the gate, lint and staleness apply
the same map without a clone, and a change of the map stales every card.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from strata.errors import ValidationError
from strata.git import Git

MAP_PATH = ".strata/packages.yml"
MAX_ENTRIES = 2000
_SEGMENT = re.compile(r"^[^/\\\x00]+$")


@dataclass(frozen=True, slots=True)
class Boundary:
    """One mapped package: a folder, its card's name and (optionally) its owners."""

    path: str
    name: str
    owners: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class PathMap:
    """The packages a repository maps, and whether they replace the detected ones."""

    entries: tuple[Boundary, ...] = ()
    replace: bool = False

    def __bool__(self) -> bool:
        return bool(self.entries) or self.replace

    def frontmatter(self) -> dict[str, Any]:
        """How a card records the map it was compiled under (empty: none)."""
        if not self:
            return {}
        mapped = {b.path: b.name for b in self.entries}
        return {"boundaries": {"replace": self.replace, "packages": mapped}}

    def sources(self) -> dict[str, str]:
        """The map as card sources: a changed map stales every card compiled under it."""
        if not self:
            return {}
        found = {f"map:{b.path}": b.name for b in self.entries}
        found["map:replace"] = str(self.replace).lower()
        return found


NO_MAP = PathMap()


def parse_path_map(text: str, *, where: str = MAP_PATH) -> PathMap:
    """A path map from its YAML; anything malformed is a :class:`ValidationError` naming why."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValidationError(f"{where} is not YAML: {exc}", field=where) from exc
    if data is None:
        return NO_MAP
    if not isinstance(data, Mapping):
        raise ValidationError(f"{where} must be a mapping with a 'packages' list", field=where)
    unknown = sorted(set(data) - {"packages", "replace"})
    if unknown:
        raise ValidationError(f"{where}: unknown keys {unknown}", field=where)
    replace = data.get("replace", False)
    if not isinstance(replace, bool):
        raise ValidationError(f"{where}: 'replace' must be true or false", field=where)
    rows = data.get("packages") or []
    if not isinstance(rows, list) or len(rows) > MAX_ENTRIES:
        raise ValidationError(
            f"{where}: 'packages' must be a list of at most {MAX_ENTRIES} entries", field=where
        )
    entries: dict[str, Boundary] = {}
    for number, row in enumerate(rows, 1):
        entry = _entry(row, f"{where}: package {number}")
        if entry.path in entries:
            raise ValidationError(f"{where}: {entry.path!r} is mapped twice", field=where)
        entries[entry.path] = entry
    names = [e.name for e in entries.values()]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValidationError(f"{where}: package names used twice: {twice}", field=where)
    return PathMap(tuple(sorted(entries.values(), key=lambda e: e.path)), replace)


def _entry(row: Any, where: str) -> Boundary:
    if isinstance(row, str):
        row = {"path": row}
    if not isinstance(row, Mapping) or not isinstance(row.get("path"), str):
        raise ValidationError(f"{where} needs a 'path' (a folder of the repository)")
    unknown = sorted(set(row) - {"path", "name", "owners"})
    if unknown:
        raise ValidationError(f"{where}: unknown keys {unknown}")
    path = row["path"].strip().strip("/") or "."
    parts = path.split("/")
    if path != "." and (any(p in (".", "..") or not _SEGMENT.match(p) for p in parts)):
        raise ValidationError(f"{where}: {row['path']!r} is not a folder inside the repository")
    name = row.get("name", path)
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise ValidationError(f"{where}: 'name' must be a non-empty string")
    owners = row.get("owners")
    if owners is not None and (
        not isinstance(owners, list) or not all(isinstance(o, str) and o for o in owners)
    ):
        raise ValidationError(f"{where}: 'owners' must be a list of names")
    return Boundary(path, name.strip(), tuple(owners) if owners is not None else None)


def read_path_map(git: Git, commit: str) -> PathMap:
    """The map at ``commit`` (none when the repository has no ``.strata/packages.yml``)."""
    entry = next((e for e in git.tree(commit) if e.path == MAP_PATH), None)
    if entry is None:
        return NO_MAP
    text = git.blobs([entry.blob])[entry.blob].decode(errors="replace")
    return parse_path_map(text)


def recorded_map(front: Mapping[str, Any]) -> PathMap:
    """The map a card's frontmatter says it was compiled under (none: no map)."""
    recorded = front.get("boundaries")
    if not isinstance(recorded, Mapping):
        return NO_MAP
    packages = recorded.get("packages") or {}
    entries = tuple(Boundary(str(path), str(name)) for path, name in sorted(dict(packages).items()))
    return PathMap(entries, bool(recorded.get("replace", False)))


def holder(path: str, folders: Mapping[str, Any]) -> str | None:
    """The deepest of ``folders`` (package paths, "." the root) that holds file ``path``."""
    parts = path.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        folder = "/".join(parts[:depth])
        if folder in folders:
            return folder
    return "." if "." in folders else None

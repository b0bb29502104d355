"""What a card is compiled from and checked against: one package graph as of a commit.

A handful of as-of reads (one round trip each, every one bounded to the
repository and ref) load it in two parts. The skeleton: the packages, their
files with content hashes, the imports and call counts between files and the
trace links (what staleness and dependency lines need). The detail, for the
packages asked for only: their symbols, what they call and their symbols'
recent changes (indexed lookups by file path). A path map
(:mod:`strata.cards.boundaries`) regroups the files before anything is
counted. Compiling a card and checking a card both work on this snapshot,
read fresh from the graph at the card's commit.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from strata.cards.boundaries import MAP_PATH, NO_MAP, PathMap, holder
from strata.errors import NotFound
from strata.graph.gateway import Gateway
from strata.temporal import AsOf, as_of_predicate, from_wire, now

_ST = as_of_predicate("st")
_E = as_of_predicate("e")
_FS = as_of_predicate("fs")

# The commit's moment in valid time: the Branch state that recorded it as head
# (the code layer dates every fact of a snapshot at that instant).
COMMIT_AT = """
MATCH (b:Branch {repo: $repo, ref: $ref})-[st:STATE]->(b)
WHERE st.expired_at IS NULL AND ($sha IS NULL OR st.head = $sha)
RETURN st.head AS head, toString(st.valid_at) AS at
ORDER BY st.valid_at DESC
LIMIT 1
"""

PACKAGES = f"""
MATCH (p:Package {{repo: $repo, ref: $ref}})-[st:STATE]->(p)
WHERE {_ST}
RETURN p.path AS path, st.name AS name, st.ecosystem AS ecosystem, st.manifest AS manifest
ORDER BY p.path
"""

FILES = f"""
MATCH (p:Package {{repo: $repo, ref: $ref}})-[e:CONTAINS]->(f:File)
WHERE {_E}
MATCH (f)-[st:STATE]->(f)
WHERE {_ST}
RETURN p.path AS package, f.path AS path, st.content_hash AS hash, st.module AS module,
       coalesce(st.is_test, false) AS is_test
"""

# Detail, read only for the packages a run compiles or checks: their files' symbols,
# the calls out of them and their symbols' recent changes (one indexed lookup per file).
SYMBOLS = f"""
UNWIND $paths AS path
MATCH (s:Symbol {{repo: $repo, ref: $ref, path: path}})-[st:STATE]->(s)
WHERE {_ST}
RETURN s.key AS key, s.path AS path, s.qualname AS qualname, s.name AS name,
       st.kind AS kind, st.qualified_name AS qualified_name, st.body_hash AS body_hash,
       st.docstring AS docstring, st.test_framework AS test, st.entrypoint AS entrypoint
"""

IMPORTS = f"""
MATCH (a:File {{repo: $repo, ref: $ref}})-[e:IMPORTS]->(b)
WHERE {_E} AND (b:File OR b:Package)
RETURN a.path AS src, labels(b)[0] AS label, b.path AS dst
"""

# The skeleton's call counts, summed per pair of files: what dependency counts need.
CALL_COUNTS = f"""
MATCH (b:Symbol {{repo: $repo, ref: $ref}})<-[e:CALLS]-(a)
WHERE {_E} AND a.repo = $repo
RETURN a.path AS src, b.path AS dst, sum(coalesce(e.count, 1)) AS count
"""

# What the given files call (names and path:qualname), for the gate's "calls" claims.
CALLEES = f"""
CALL {{
  UNWIND $paths AS path
  MATCH (a:Symbol {{repo: $repo, ref: $ref, path: path}})-[e:CALLS]->(b:Symbol)
  WHERE {_E} AND b.repo = $repo AND b.ref = $ref
  RETURN a.path AS src, b.path AS dst, b.name AS name, b.path + ':' + b.qualname AS target
  UNION
  MATCH (a:File {{repo: $repo, ref: $ref}})-[e:CALLS]->(b:Symbol)
  WHERE a.path IN $paths AND {_E} AND b.repo = $repo AND b.ref = $ref
  RETURN a.path AS src, b.path AS dst, b.name AS name, b.path + ':' + b.qualname AS target
}}
RETURN DISTINCT src, dst, name, target
"""

LINKS = f"""
MATCH (s:Symbol {{repo: $repo, ref: $ref}})<-[e:IMPLEMENTED_BY|AFFECTS|VERIFIED_BY]-(r:Requirement)
WHERE {_E}
MATCH (r)-[st:STATE]->(r)
WHERE {_ST}
RETURN r.req_id AS req_id, st.text AS text, type(e) AS type, e.status AS status,
       s.path AS path, s.qualname AS qualname
"""

# Each file's newest symbol states (at most $limit): a package's newest are among
# its files' newest, so a package's list is the same whichever packages are read.
CHANGES = """
UNWIND $paths AS path
MATCH (s:Symbol {repo: $repo, ref: $ref, path: path})-[st:STATE]->(s)
WHERE st.valid_at <= datetime($valid_at) AND st.created_at <= datetime($known_at)
  AND (st.expired_at IS NULL OR st.expired_at > datetime($known_at))
WITH path, s, st
ORDER BY st.valid_at DESC, s.qualname
WITH path, collect({qualname: s.qualname, at: toString(st.valid_at),
                    commit: st.source_commit})[..$limit] AS newest
UNWIND newest AS row
RETURN path, row.qualname AS qualname, row.at AS at, row.commit AS commit
"""


@dataclass(frozen=True, slots=True)
class SymbolRow:
    """One symbol as of the commit."""

    key: str
    path: str
    qualname: str
    name: str
    kind: str
    qualified_name: str
    body_hash: str
    docstring: str | None
    test: str | None
    entrypoint: str | None

    @property
    def ref(self) -> str:
        """How cards name a symbol: ``path:qualname`` (unique in a ref)."""
        return f"{self.path}:{self.qualname}"


@dataclass(frozen=True, slots=True)
class LinkRow:
    """A trace link from a requirement into a symbol."""

    req_id: str
    text: str
    type: str
    status: str
    target: str  # path:qualname


@dataclass(frozen=True, slots=True)
class ChangeRow:
    """A symbol state that opened at some commit (an addition or a change)."""

    target: str
    at: datetime
    commit: str | None


@dataclass(frozen=True, slots=True)
class PackageRow:
    path: str
    name: str
    ecosystem: str
    manifest: str | None


@dataclass
class Snapshot:
    """The graph of one repository and ref as of a commit, grouped by package.

    The skeleton (packages, files with their hashes, dependency counts between
    packages, trace links) is always whole: staleness, vanished packages and
    every card's dependency lines need it. The detail (symbols, what each
    package calls, recent changes) is read only for ``detailed`` packages
    (None: every package), so a run that compiles one card of a repository
    never reads the symbols of a 5,000-file package it does not touch.
    """

    repo: str
    ref: str
    commit: str
    valid_at: datetime
    packages: dict[str, PackageRow]
    files: dict[str, dict[str, str]] = field(default_factory=dict)  # package -> path -> hash
    tests: set[str] = field(default_factory=set)  # test file paths
    symbols: dict[str, list[SymbolRow]] = field(default_factory=dict)  # path -> symbols
    package_of: dict[str, str] = field(default_factory=dict)  # file path -> package path
    imports: dict[tuple[str, str], int] = field(default_factory=dict)  # (from, to) package
    calls: dict[tuple[str, str], int] = field(default_factory=dict)
    callees: dict[str, set[str]] = field(default_factory=dict)  # package -> names it calls
    links: list[LinkRow] = field(default_factory=list)
    changes: list[ChangeRow] = field(default_factory=list)
    owners: dict[str, list[str]] = field(default_factory=dict)  # package -> owners
    names: set[str] | None = None  # every name a card may mention (the gate fills it once)
    known_at: datetime | None = None
    boundaries: PathMap = NO_MAP  # the path map the packages were grouped by
    detailed: set[str] | None = None  # packages whose detail was read (None: all)

    def package_by_name(self, name: str) -> str | None:
        """A package path from its name or path (cards name packages by name)."""
        for path, row in self.packages.items():
            if name in (row.name, path):
                return path
        return None

    def symbols_of(self, package: str) -> list[SymbolRow]:
        return [s for p in sorted(self.files.get(package, {})) for s in self.symbols.get(p, [])]

    def has_detail(self, package: str) -> bool:
        return self.detailed is None or package in self.detailed


def resolve_commit(
    gateway: Gateway, repo: str, ref: str, sha: str | None, *, timeout: float | None = None
) -> tuple[str, datetime]:
    """The indexed commit (default: the ref's head) and its moment in valid time."""
    rows = gateway.read(COMMIT_AT, repo=repo, ref=ref, sha=sha, timeout=timeout)
    if not rows:
        what = f"commit {sha}" if sha else "any commit"
        raise NotFound(f"{repo}/{ref} has no indexed {what}", hint="index it first")
    return str(rows[0]["head"]), from_wire(rows[0]["at"])


def load_snapshot(
    gateway: Gateway,
    repo: str,
    ref: str = "main",
    commit: str | None = None,
    *,
    known_at: datetime | None = None,
    timeout: float | None = None,
    packages: set[str] | None = None,
    boundaries: PathMap = NO_MAP,
) -> Snapshot:
    """Read the package graph of ``repo``/``ref`` as of ``commit`` (default: the head),
    grouped by ``boundaries``; the detail of ``packages`` only (None: of every package)."""
    snap = load_skeleton(
        gateway, repo, ref, commit, known_at=known_at, timeout=timeout, boundaries=boundaries
    )
    load_detail(gateway, snap, packages, timeout=timeout)
    return snap


def load_skeleton(
    gateway: Gateway,
    repo: str,
    ref: str = "main",
    commit: str | None = None,
    *,
    known_at: datetime | None = None,
    timeout: float | None = None,
    boundaries: PathMap = NO_MAP,
) -> Snapshot:
    """Packages, files, dependency counts and trace links as of ``commit``; no detail yet."""
    sha, valid_at = resolve_commit(gateway, repo, ref, commit, timeout=timeout)
    known = known_at or now()
    params = _params(repo, ref, valid_at, known, timeout)
    packages = {
        str(r["path"]): PackageRow(str(r["path"]), r["name"], r["ecosystem"], r.get("manifest"))
        for r in gateway.read(PACKAGES, **params)
    }
    snap = Snapshot(repo, ref, sha, valid_at, packages, known_at=known, detailed=set())
    detected = set(packages)
    rows = gateway.read(FILES, **params)
    for row in rows:
        snap.package_of[row["path"]] = row["package"]
        if row["is_test"]:
            snap.tests.add(row["path"])
    if boundaries:
        regroup(snap, boundaries)
    for row in rows:
        path = row["path"]
        snap.files.setdefault(snap.package_of[path], {})[path] = row["hash"]
    for row in gateway.read(IMPORTS, **params):
        source = snap.package_of.get(row["src"])
        target = _imported(snap, detected, row["label"], row["dst"])
        _count(snap.imports, source, target, 1)
    for row in gateway.read(CALL_COUNTS, **params):
        caller = snap.package_of.get(row["src"])
        _count(snap.calls, caller, snap.package_of.get(row["dst"]), int(row["count"]))
    snap.links = sorted(
        (
            LinkRow(
                r["req_id"], r["text"] or "", r["type"], r["status"], f"{r['path']}:{r['qualname']}"
            )
            for r in gateway.read(LINKS, **params)
        ),
        key=lambda link: (link.req_id, link.target, link.type),
    )
    return snap


def load_detail(
    gateway: Gateway,
    snap: Snapshot,
    packages: set[str] | None,
    *,
    changes: int = 8,
    timeout: float | None = None,
) -> None:
    """Add the detail of ``packages`` (None: every package) not read yet to ``snap``."""
    if snap.detailed is None:
        return  # every package's detail is in already
    wanted = set(snap.packages) if packages is None else packages & set(snap.packages)
    wanted -= snap.detailed
    snap.detailed |= wanted
    if snap.detailed >= set(snap.packages):
        snap.detailed = None
    if not wanted:
        return
    snap.names = None  # the gate's names grow with the detail
    paths = sorted(p for package in wanted for p in snap.files.get(package, {}))
    known = snap.known_at or now()
    params = {**_params(snap.repo, snap.ref, snap.valid_at, known, timeout), "paths": paths}
    by_path: dict[str, list[SymbolRow]] = defaultdict(list)
    for row in gateway.read(SYMBOLS, **params):
        by_path[row["path"]].append(
            SymbolRow(
                row["key"],
                row["path"],
                row["qualname"],
                row["name"],
                row["kind"],
                row["qualified_name"],
                row["body_hash"],
                row.get("docstring"),
                row.get("test"),
                row.get("entrypoint"),
            )
        )
    snap.symbols.update({p: sorted(v, key=lambda s: s.qualname) for p, v in by_path.items()})
    for row in gateway.read(CALLEES, **params):
        caller = snap.package_of.get(row["src"])
        if caller is not None:
            snap.callees.setdefault(caller, set()).update((row["name"], row["target"]))
    newest: dict[str, list[ChangeRow]] = defaultdict(list)
    for r in gateway.read(CHANGES, limit=changes, **params):
        package = snap.package_of[r["path"]]
        newest[package].append(
            ChangeRow(f"{r['path']}:{r['qualname']}", from_wire(r["at"]), r.get("commit"))
        )
    for package in sorted(newest):
        rows = sorted(newest[package], key=lambda c: (-c.at.timestamp(), *c.target.rsplit(":", 1)))
        snap.changes.extend(rows[:changes])


def regroup(snap: Snapshot, boundaries: PathMap) -> None:
    """Regroup the snapshot's files by the path map (before any count is made)."""
    folders: dict[str, PackageRow] = {} if boundaries.replace else dict(snap.packages)
    for entry in boundaries.entries:
        folders[entry.path] = PackageRow(entry.path, entry.name, "mapped", MAP_PATH)
    if "." not in folders:
        # with replace, what no mapped folder holds is the repository's root package
        root = snap.packages.get(".")
        folders["."] = root or PackageRow(".", snap.repo, "mapped", None)
    for path in list(snap.package_of):
        snap.package_of[path] = holder(path, folders) or "."
    held = set(snap.package_of.values())
    kept = set(snap.packages) if not boundaries.replace else set()
    snap.packages = {p: row for p, row in folders.items() if p in held or p in kept}
    snap.boundaries = boundaries


def _imported(snap: Snapshot, detected: set[str], label: str, path: str) -> str | None:
    """The package an import lands in: a file's package, or an imported package (one the
    path map replaced counts for the package that now holds its folder)."""
    if label != "Package":
        return snap.package_of.get(path)
    if path in snap.packages or path not in detected:
        return path
    return holder(f"{path}/_", snap.packages)


def _params(
    repo: str, ref: str, valid_at: datetime, known_at: datetime, timeout: float | None
) -> dict[str, Any]:
    return {"repo": repo, "ref": ref, "timeout": timeout, **AsOf.at(valid_at, known_at).params()}


def _count(into: dict[tuple[str, str], int], src: str | None, dst: str | None, n: int) -> None:
    # only edges between two different packages are dependencies
    if src is None or dst is None or src == dst:
        return
    into[(src, dst)] = into.get((src, dst), 0) + n

"""The code layer's facts: a snapshot of parsed, resolved files as ontology facts.

Every file-derived fact is scoped to its file (the File node's key), so a
reindex of that file can re-sync exactly the facts it produced. Valid time is
the commit time of the indexed commit; the source is the commit, path and line.

Under ontology v4 positions are not content (:mod:`strata.code.layout`): the
File version carries its symbols' spans, and call sites are offsets from the
calling symbol's start (or the file's origin), so lines shifting above a
symbol change the File's version only. Under an older ontology the facts are
written as that version declares them (absolute spans and lines).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata.code.languages import module_system_for
from strata.code.layout import encode_layout, origin_of, relative_site, starts_of
from strata.code.model import FileExtract, SymbolDef
from strata.code.modules import ModuleIndex, PackageInfo, package_of
from strata.code.resolver import FileResolution
from strata.facts import EdgeFact, NodeRef, Source, StateFact
from strata.git import CommitInfo
from strata.ontology.model import Ontology

SIGNATURE_MAX = 300
DOCSTRING_MAX = 1000
LAYOUT_VERSION = 4  # the first ontology version that keeps positions out of content


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The commit being projected, for one repository and ref."""

    repo: str
    ref: str
    commit: CommitInfo
    valid_at: datetime


class CodeProjection:
    """Builds the code layer's facts for one snapshot."""

    def __init__(self, ontology: Ontology, snapshot: Snapshot, index: ModuleIndex) -> None:
        self.ontology = ontology
        self.snapshot = snapshot
        self.index = index
        self.layout = ontology.version >= LAYOUT_VERSION
        self._keys = {
            label: ontology.node(label)
            for label in (
                "Repository",
                "Branch",
                "Commit",
                "Package",
                "File",
                "Module",
                "Symbol",
            )
        }
        # A run asks for the same references over and over (every call to a popular
        # function, every fact of a file names its File): compose each key once.
        self._refs: dict[tuple[str, str, str], NodeRef] = {}

    # -- identities and references ------------------------------------------------------

    def file_identity(self, path: str) -> dict[str, Any]:
        return {"repo": self.snapshot.repo, "ref": self.snapshot.ref, "path": path}

    def symbol_identity(self, path: str, symbol: SymbolDef) -> dict[str, Any]:
        return {
            "repo": self.snapshot.repo,
            "ref": self.snapshot.ref,
            "path": path,
            "qualname": symbol.qualname,
            "name": symbol.name,
        }

    def ref(self, label: str, identity: dict[str, Any]) -> NodeRef:
        return NodeRef(label, self._keys[label].make_key(identity))

    def file_ref(self, path: str) -> NodeRef:
        found = self._refs.get(("File", path, ""))
        if found is None:
            found = self._refs["File", path, ""] = self.ref("File", self.file_identity(path))
        return found

    def symbol_ref(self, path: str, qualname: str) -> NodeRef:
        found = self._refs.get(("Symbol", path, qualname))
        if found is None:
            identity = {
                "repo": self.snapshot.repo,
                "ref": self.snapshot.ref,
                "path": path,
                "qualname": qualname,
            }
            found = NodeRef("Symbol", self._keys["Symbol"].make_key(identity))
            self._refs["Symbol", path, qualname] = found
        return found

    def scope(self, path: str) -> str:
        return self.file_ref(path).key

    @property
    def repo_scope(self) -> str:
        return self.ref("Branch", {"repo": self.snapshot.repo, "ref": self.snapshot.ref}).key

    def _source(self, path: str | None = None, line: int | None = None) -> Source:
        return Source(commit=self.snapshot.commit.sha, path=path, line=line)

    # -- repository level ------------------------------------------------------------

    def repository_facts(
        self, packages: list[PackageInfo], *, files: int, symbols: int, skipped: int
    ) -> tuple[list[StateFact], list[EdgeFact]]:
        snap = self.snapshot
        at = snap.valid_at
        repo_identity = {"repo": snap.repo}
        branch_identity = {"repo": snap.repo, "ref": snap.ref}
        states: list[StateFact] = [
            StateFact("Repository", repo_identity, {}, at, source=self._source()),
            StateFact(
                "Branch",
                branch_identity,
                {
                    "head": snap.commit.sha,
                    "committed_at": snap.commit.committed_at,
                    "files": files,
                    "symbols": symbols,
                    "skipped": skipped,
                },
                at,
                source=self._source(),
                scope=self.repo_scope,
            ),
            StateFact(
                "Commit",
                {"repo": snap.repo, "sha": snap.commit.sha},
                {
                    "committed_at": snap.commit.committed_at,
                    "message": snap.commit.message[:2000],
                    "author": snap.commit.author[:200],
                    "parents": list(snap.commit.parents),
                    "ref": snap.ref,
                },
                snap.commit.committed_at,
                source=self._source(),
            ),
        ]
        repo_ref = self.ref("Repository", repo_identity)
        edges: list[EdgeFact] = [
            EdgeFact(
                "CONTAINS",
                repo_ref,
                self.ref("Branch", branch_identity),
                snap.repo,
                {},
                at,
                source=self._source(),
                scope=self.repo_scope,
            )
        ]
        for package in packages:
            identity = {"repo": snap.repo, "ref": snap.ref, "path": package.path or "."}
            states.append(
                StateFact(
                    "Package",
                    identity,
                    {
                        "name": package.name[:200],
                        "ecosystem": package.ecosystem,
                        "manifest": package.manifest,
                    },
                    at,
                    source=self._source(package.manifest),
                    scope=self.repo_scope,
                )
            )
            edges.append(
                EdgeFact(
                    "CONTAINS",
                    repo_ref,
                    self.ref("Package", identity),
                    snap.repo,
                    {},
                    at,
                    source=self._source(package.manifest),
                    scope=self.repo_scope,
                )
            )
        return states, edges

    # -- file level ------------------------------------------------------------------

    def qualified_name(self, path: str, extract: FileExtract, symbol: SymbolDef) -> str:
        """The name the file's module system writes for the symbol, else ``path:qualname``."""
        system = module_system_for(extract.language)
        if system is not None:
            named = system.qualified_name(self.index.module_of.get(path), extract, symbol)
            if named is not None:
                return named
        return f"{path}:{symbol.qualname}"

    def file_states(
        self, path: str, extract: FileExtract, resolution: FileResolution, blob: str
    ) -> list[StateFact]:
        """The File's state, its symbols' states, and the modules it imports."""
        at = self.snapshot.valid_at
        scope = self.scope(path)
        file_props: dict[str, Any] = {
            "language": extract.language,
            "content_hash": blob,
            "lines": extract.lines,
            "module": self.index.module_of.get(path),
            "parse_errors": extract.has_errors,
            "frameworks": sorted(extract.frameworks),
            "is_test": extract.is_test_file,
            "entrypoints": list(extract.entrypoints),
            "unresolved_calls": resolution.unresolved.get(None, []),
        }
        if self.layout:
            file_props["layout"] = encode_layout(extract.symbols)
            file_props["layout_origin"] = origin_of(extract)
        states = [
            StateFact(
                "File",
                self.file_identity(path),
                _compact(file_props),
                at,
                source=self._source(path),
                scope=scope,
            )
        ]
        for symbol in extract.symbols:
            unresolved = resolution.unresolved.get(symbol.qualname) or None
            props: dict[str, Any] = {
                "kind": symbol.kind,
                "qualified_name": self.qualified_name(path, extract, symbol)[:500],
                "body_hash": symbol.body_hash,
                "shape_hash": symbol.shape_hash,
                "language": extract.language,
                "signature": (symbol.signature or None) and symbol.signature[:SIGNATURE_MAX],
                "docstring": (symbol.docstring or None) and symbol.docstring[:DOCSTRING_MAX],
                "test_framework": symbol.test_framework,
                "entrypoint": symbol.entrypoint
                or ("public_api" if symbol.qualname in resolution.public_api else None),
                "framework": symbol.framework,
                "decorators": [d[:200] for d in symbol.decorators[:20]] or None,
                "unresolved_calls": unresolved,
            }
            if self.layout:
                if unresolved:
                    props["unresolved_calls"] = [
                        relative_site(u, symbol.line_start) for u in unresolved
                    ]
            else:
                props["line_start"], props["line_end"] = symbol.line_start, symbol.line_end
            states.append(
                StateFact(
                    "Symbol",
                    self.symbol_identity(path, symbol),
                    _compact(props),
                    at,
                    source=self._source(path, symbol.line_start),
                    scope=scope,
                )
            )
        for edge in resolution.imports:
            if not edge.paths:
                states.append(
                    StateFact(
                        "Module",
                        self._module_identity(edge.module),
                        {"external": True},
                        at,
                        source=self._source(path, edge.line),
                    )
                )
        return states

    def _module_identity(self, name: str) -> dict[str, Any]:
        return {"repo": self.snapshot.repo, "ref": self.snapshot.ref, "name": name[:300]}

    def file_edges(
        self,
        path: str,
        extract: FileExtract,
        resolution: FileResolution,
        packages: list[PackageInfo],
    ) -> list[EdgeFact]:
        """Containment, imports, calls and type edges produced by one file."""
        snap = self.snapshot
        at = snap.valid_at
        scope = self.scope(path)
        file_ref = self.file_ref(path)
        edges: list[EdgeFact] = []
        starts = starts_of(extract)
        origin = origin_of(extract)
        package = package_of(path, packages)
        if package is not None:
            owner = self.ref(
                "Package", {"repo": snap.repo, "ref": snap.ref, "path": package.path or "."}
            )
        else:
            owner = self.ref("Repository", {"repo": snap.repo})
        edges.append(
            EdgeFact(
                "CONTAINS",
                owner,
                file_ref,
                snap.repo,
                {},
                at,
                source=self._source(path),
                scope=scope,
            )
        )
        declared = {symbol.qualname for symbol in extract.symbols}
        for symbol in extract.symbols:
            symbol_ref = self.symbol_ref(path, symbol.qualname)
            edges.append(
                EdgeFact(
                    "DEFINES",
                    file_ref,
                    symbol_ref,
                    snap.repo,
                    {},
                    at,
                    source=self._source(path, symbol.line_start),
                    scope=scope,
                )
            )
            # A method may be declared outside its type's file (its receiver type lives in
            # another file): containment never points at a symbol this file does not define.
            if symbol.parent is not None and symbol.parent in declared:
                edges.append(
                    EdgeFact(
                        "CONTAINS",
                        self.symbol_ref(path, symbol.parent),
                        symbol_ref,
                        snap.repo,
                        {},
                        at,
                        source=self._source(path, symbol.line_start),
                        scope=scope,
                    )
                )
        seen_imports: set[tuple[str, str]] = set()
        for imp in resolution.imports:
            targets = (
                [self.file_ref(p) for p in imp.paths if p != path]
                if imp.paths
                else [self.ref("Module", self._module_identity(imp.module))]
            )
            for target in targets:
                if (target.label, target.key) in seen_imports:
                    continue
                seen_imports.add((target.label, target.key))
                props = _compact(
                    {
                        **self._at(imp.line, origin),
                        "alias": imp.alias,
                        "names": list(imp.names)[:50] or None,
                    }
                )
                edges.append(
                    EdgeFact(
                        "IMPORTS",
                        file_ref,
                        target,
                        snap.repo,
                        props,
                        at,
                        source=self._source(path, imp.line),
                        scope=scope,
                    )
                )
        for call in resolution.calls:
            src = (
                self.symbol_ref(path, call.src_qualname)
                if call.src_qualname is not None
                else file_ref
            )
            base = starts.get(call.src_qualname, origin) if call.src_qualname else origin
            props = {
                **self._at(call.line, base, call.lines),
                "confidence": call.confidence,
                "resolution": call.resolution,
                "count": len(call.lines),
            }
            edges.append(
                EdgeFact(
                    "CALLS",
                    src,
                    self.symbol_ref(call.dst_path, call.dst_qualname),
                    snap.repo,
                    props,
                    at,
                    source=self._source(path, call.line),
                    scope=scope,
                )
            )
        for type_edge in resolution.types:
            edges.append(
                EdgeFact(
                    type_edge.type,
                    self.symbol_ref(path, type_edge.src_qualname),
                    self.symbol_ref(type_edge.dst_path, type_edge.dst_qualname),
                    snap.repo,
                    {
                        **self._at(type_edge.line, starts.get(type_edge.src_qualname, origin)),
                        "confidence": type_edge.confidence,
                    },
                    at,
                    source=self._source(path, type_edge.line),
                    scope=scope,
                )
            )
        return edges

    def _at(self, line: int, base: int, lines: tuple[int, ...] | None = None) -> dict[str, Any]:
        """A site's position as the ontology stores it: offsets from ``base`` (v4), else
        absolute ``line`` (and ``lines``)."""
        if not self.layout:
            return {"line": line} if lines is None else {"line": line, "lines": list(lines)}
        out: dict[str, Any] = {"offset": line - base}
        if lines is not None:
            out["offsets"] = [x - base for x in lines]
        return out


def _compact(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if v is not None}

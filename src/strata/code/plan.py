"""Which files an index run re-syncs: the plan phase.

A full run re-syncs every file and closes the ones the graph holds that are
gone. An incremental run re-syncs the files the diff from the indexed head
changed and the *dependents* that may resolve differently because of them:
files that call a name that appeared or vanished, whose imports now reach an
added file or a deleted file's module, and files that can see a changed
export (:mod:`strata.code.flow.exports`: a changed signature, return, global,
attribute or argument, followed through the callers of callers). A body-only
change re-syncs its own file. Without the previous parse of a changed file
(a cold cache) the exports cannot be compared, and the flow's exact
dependents (every file whose values came from it) are used instead.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from strata.code.flow.exports import Seeds, changed_exports, dependents, known_mentions
from strata.code.flow.model import FlowCall
from strata.code.model import FileExtract
from strata.code.modules import FAMILY, ModuleIndex, binding_paths
from strata.code.pending import PendingWrites
from strata.code.reads import CodeReads
from strata.code.resolver import Resolver
from strata.code.run import Run
from strata.graph.store import FactStore
from strata.ontology.model import STATE


class Planner:
    """The plan phase of :class:`~strata.code.indexer.CodeIndexer`."""

    def __init__(self, store: FactStore, code_reads: CodeReads, pending: PendingWrites) -> None:
        self.store = store
        self.code_reads = code_reads
        self.pending = pending

    def plan(self, run: Run) -> tuple[set[str], set[str]]:
        """Which files to re-sync and which vanished."""
        snap = run.snapshot
        run.pending = self.pending.read(snap.repo, snap.ref)
        if run.result.mode == "incremental" and run.result.base is not None:
            return self._incremental_paths(run, run.result.base)
        present = set(run.extracts.files)
        vanished = {
            p for p in self.code_reads.open_file_paths(snap.repo, snap.ref) if p not in present
        }
        return present, vanished

    def _incremental_paths(self, run: Run, base: str) -> tuple[set[str], set[str]]:
        """Files to re-sync (changed, and dependents that may resolve differently) and
        files that vanished."""
        git, extracts = run.git, run.extracts
        repo, ref = run.snapshot.repo, run.snapshot.ref
        present = set(extracts.files)
        changed: set[str] = set()
        deleted: set[str] = set()
        for change in git.diff(base, run.snapshot.commit.sha):
            if change.status == "D":
                deleted.add(change.path)
            else:
                changed.add(change.path)
            if change.old_path is not None and change.old_path != change.path:
                deleted.add(change.old_path)
        stopped = run.pending
        if stopped is not None and stopped.commit != base:
            # A write from this head stopped halfway: its files may hold other facts than
            # the head's, whatever git's diff says. Re-synced, read back, never skipped.
            changed |= stopped.paths & present
            deleted |= stopped.paths - present
            for path in stopped.paths:
                run.previous.digests.pop(path, None)
        changed &= present
        deleted -= present
        open_now = self._open_files(repo, ref, changed | deleted)  # disjoint sets
        deleted &= open_now
        existed = changed & open_now
        added = changed - existed
        before_names = self._names_before(run, existed | deleted)
        names: set[str] = set()
        for path in changed | deleted:
            old_names = before_names.get(path, set())
            new = extracts.files.get(path)
            new_names = {s.qualname for s in new[1].symbols} if new else set()
            names |= {n.rsplit(".", 1)[-1] for n in old_names ^ new_names}
        gone_modules = self._module_names_of(run, deleted)
        # A package's `__init__` re-exports names: what its importers bind may have moved.
        reached = added | {p for p in changed if posixpath.basename(p).startswith("__init__.")}
        found = {
            path
            for path, (blob, extract) in extracts.files.items()
            if path not in changed
            and (
                _calls_any(blob, extract, names)
                or (
                    gone_modules
                    and any(_imports_module(imp.module, gone_modules) for imp in extract.imports)
                )
                or (reached and _reaches(run.index, path, reached))
            )
        }
        resolver = run.ensure_resolver()
        seeds = self._seeds(run, resolver, changed, deleted, existed)
        if seeds is None:
            # Values flow through calls: a changed return type moves the callers' callers.
            found |= resolver.flow.dependents(changed | deleted) - changed
        elif seeds:
            found |= dependents(extracts.files, changed | deleted, seeds)
        return changed | found, deleted

    def _seeds(
        self, run: Run, resolver: Resolver, changed: set[str], deleted: set[str], existed: set[str]
    ) -> Seeds | None:
        """What the changed and deleted files' exports changed (None: some previous parse
        is missing, the exports cannot be compared)."""
        seeds = Seeds()
        solver = resolver.flow.solver

        def passes_values(path: str, call: FlowCall) -> bool:
            at = (call.line, call.block)
            args = [a for a in call.args if a is not None] + [v for _, v in call.keywords]
            return any(solver.eval(path, call.scope, arg, at=at) for arg in args)

        for path in sorted(changed | deleted):
            old = run.previous.files.get(path)
            new = run.extracts.files.get(path)
            if old is None and path in existed | deleted:
                return None  # it was indexed, but its parse is not cached
            if old is not None and new is not None and old[0] == new[0]:
                continue
            if old is None and new is not None:
                before: FileExtract = _empty(new[1])
            elif old is not None:
                before = old[1]
            else:
                continue
            after = new[1] if new is not None else _empty(before)
            found = changed_exports(path, before, after, passes_values)
            if found is None:
                return None
            seeds.update(found)
        return seeds

    def _module_names_of(self, run: Run, paths: set[str]) -> set[str]:
        """The module names deleted files answered to (from their last parse when cached)."""
        found: set[str] = set()
        for path in paths:
            old = run.previous.files.get(path)
            if old is None:
                found.add(posixpath.splitext(path)[0].replace("/", "."))
                continue
            family = FAMILY.get(old[1].language)
            if family is not None:
                found.update(run.index.module_names(family, path, old[1]))
        return {name for name in found if name}

    def _names_before(self, run: Run, paths: set[str]) -> dict[str, set[str]]:
        """Qualnames each file had at the indexed head (cache first, else the graph)."""
        previous = run.previous.files
        found = {p: {s.qualname for s in previous[p][1].symbols} for p in paths if p in previous}
        missing = paths - set(found)
        if missing:
            snap = run.snapshot
            found.update(self.code_reads.symbol_qualnames(snap.repo, snap.ref, missing))
        return found

    def _open_files(self, repo: str, ref: str, paths: set[str]) -> set[str]:
        """The paths whose File is open in the graph (one query, for their states only)."""
        if not paths:
            return set()
        node = self.store.ontology.node("File")
        keys = {node.make_key({"repo": repo, "ref": ref, "path": p}): p for p in paths}
        open_now = self.store.open_slots("code", list(keys), types=[STATE])
        found = {src for (_, src, _, _) in open_now[STATE]}
        return {keys[k] for k in found if k in keys}


def _empty(like: FileExtract) -> FileExtract:
    """A file with nothing in it, as the side of an added or deleted file."""
    return replace(like, lines=0, symbols=(), calls=(), imports=(), flow=None)


def _reaches(index: ModuleIndex, path: str, targets: set[str]) -> bool:
    """True if one of the file's imports resolves to one of ``targets``."""
    return any(
        p in targets
        for _, bound in index.scope(path).imports
        for b in bound
        for p in binding_paths(b)
    )


def _calls_any(blob: str, extract: FileExtract, names: set[str]) -> bool:
    """Whether ``extract`` calls one of ``names``; a file whose memoised mentions (a
    superset of its call names) hold none of them is answered without its calls."""
    if not names:
        return False
    known = known_mentions(blob)
    if known is not None and known.mentions.isdisjoint(names):
        return False
    return any(call.name in names for call in extract.calls)


def _imports_module(module: str, names: set[str]) -> bool:
    """An import of one of ``names`` or of something inside it (``a.b`` of ``a.b.c``)."""
    cleaned = module.lstrip("./").replace("/", ".").replace("::", ".")
    return any(
        cleaned == name or cleaned.startswith(name + ".") or name.endswith("." + cleaned)
        for name in (n.replace("/", ".").replace("::", ".") for n in names)
    )

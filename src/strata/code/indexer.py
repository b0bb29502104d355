"""Index a commit of a repository into the code layer, fully or incrementally.

The base of an incremental run is the head the graph already holds for the
ref (the Branch node), not whatever a webhook claims, so a missed or repeated
delivery cannot corrupt the projection: the diff from the indexed head to the
new commit is reparsed, files that can see a changed export are re-resolved
(:mod:`strata.code.plan`), and the facts of every touched file are diffed
against what the graph holds open: only new and changed facts are written,
vanished ones closed at the commit's time (:mod:`strata.code.sync`).
Re-running the same commit changes nothing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from strata.code.cache import ExtractCache, ExtractSet
from strata.code.flow.statements import StatementIndexes
from strata.code.heap import collector_paused, freeze_before_resuming, heap_frozen
from strata.code.listing import Listings, list_tree
from strata.code.model import FileExtract
from strata.code.modules import ModuleIndex
from strata.code.parallel import parse_guarded, parse_parallel
from strata.code.pending import PendingWrites
from strata.code.plan import Planner
from strata.code.projection import CodeProjection, Snapshot
from strata.code.reads import CodeReads
from strata.code.result import IndexResult, Progress
from strata.code.run import Clock, Run
from strata.code.select import skip_reason_for_content
from strata.code.sync import Sync, facts_digest
from strata.facts import Fact, StateFact
from strata.git import Git, TreeEntry, valid_sha
from strata.graph.reads import Reads
from strata.graph.store import FactStore

__all__ = ["PARALLEL_PARSE_MIN_FILES", "CodeIndexer", "IndexResult", "Progress"]

PARALLEL_PARSE_MIN_FILES = 400


# Files a run re-resolves with a rebased solver; more start a new one (FlowIndex.restart).
MAX_REBASED_WRITES = 64


def _supported(name: str) -> bool:
    return _supported_extension(os.path.splitext(name)[1].lower())


@functools.lru_cache(maxsize=1024)
def _supported_extension(extension: str) -> bool:
    """Whether an adapter parses files of this extension (asked for every tree entry of
    every push: memoised, and the language registry imported once)."""
    from strata.code.languages import adapter_for_path

    return adapter_for_path("file" + extension) is not None


class CodeIndexer:
    """The code worker's engine; one instance can index many repositories."""

    def __init__(
        self,
        store: FactStore,
        reads: Reads,
        *,
        cache: ExtractCache,
        max_file_bytes: int = 1_000_000,
        workers: int = 2,
        batch_size: int = 2000,
        progress: Progress | None = None,
        statements: StatementIndexes | None = None,
        listings: Listings | None = None,
    ) -> None:
        """``statements``: the flow's writers' indexes this process keeps between runs
        (a push then re-reads its changed files only); None builds one per run."""
        self.store = store
        self.reads = reads
        self.code_reads = CodeReads(reads.gateway, store.ontology)
        self.cache = cache
        self.max_file_bytes = max_file_bytes
        self.workers = workers
        self.batch_size = batch_size
        self.progress = progress or (lambda phase, counters: None)
        self.statements = statements
        self.listings = listings
        pending = PendingWrites(reads.gateway)
        self.planner = Planner(store, self.code_reads, pending)
        self.sync = Sync(store, workers, batch_size, self.progress, pending)

    # -- entry points ----------------------------------------------------------------

    def index(
        self, git: Git, repo: str, ref: str, after: str, *, moved_at: datetime | None = None
    ) -> IndexResult:
        """Bring the projection of ``repo``/``ref`` to commit ``after``.

        ``moved_at`` is when the ref moved to ``after`` (a push's arrival); it
        dates the new state only when ``after`` does not descend from the
        indexed head (see :meth:`_start`).
        """
        # Reading, planning and resolving with the collector paused (strata.code.heap:
        # seconds of full passes otherwise); writing with it on, over the new objects
        # only: the driver's answers hold cycles that keep each batch's rows alive
        # until a pass frees them (paused throughout, a full Django index peaked
        # 130 MB higher; on, over the whole heap, its sync took 4.9 s instead of 0.6).
        with collector_paused():
            run = self._start(git, repo, ref, after, moved_at)
            if run.result.mode == "unchanged":
                run.result.seconds = run.clock.done()
                return run.result
        try:
            return self._index(run)
        except BaseException:
            if run.stream is not None:
                run.stream.abort()  # no batch of a failed run is left writing
            self.sync.retract(run)  # a first index's facts taken back
            if run.early is not None:
                run.early.drop()
            self.cache.discard()  # the graph keeps its head: so does the cache
            raise

    def _index(self, run: Run) -> IndexResult:
        snap = run.snapshot
        with collector_paused():
            try:
                self._read_tree(run)
                write, deleted = self.planner.plan(run)
                if len(write) > MAX_REBASED_WRITES and run.resolver is not None:
                    run.resolver.flow.restart()  # many files re-resolved: as a full index
                run.clock.lap("plan")
                run.stream = self.sync.fresh_files(run, write)
                synced, states, edges = self._project(run, write)
            finally:
                run.release()  # freed now, not left to a full collection (strata.code.heap)
            run.result.files_deleted = len(deleted)
            self._changed_symbols(run, write, deleted)
            # The head's digests stop vouching for the files about to be written: a write
            # of several transactions that fails halfway leaves some of them with other
            # facts, and the next run (from the same head) must read those back.
            for path in synced | deleted:
                run.previous.digests.pop(path, None)
            # Staged now, so the cache's thread pickles while this one waits on Neo4j;
            # published only if the write succeeds (else the head's set stays).
            run.extracts.commit = snap.commit.sha
            early, run.early = run.early, None
            self.cache.stage(snap.repo, snap.ref, run.extracts, early=early)
            freeze_before_resuming()
        with heap_frozen():
            facts = self._repository_facts(run)
            self.sync.write(run, synced | deleted, states, edges, facts)
        self.cache.save(snap.repo, snap.ref, run.extracts)
        run.result.seconds = run.clock.done()
        self.progress("done", run.result.as_dict())
        return run.result

    def _start(self, git: Git, repo: str, ref: str, rev: str, moved_at: datetime | None) -> Run:
        """Resolve the commit and decide between full, incremental and nothing to do.

        A commit that does not descend from the indexed head (a rewind to an
        ancestor, a force push to rewritten history, an old head git no longer
        has) moved the ref back or sideways: its state holds from ``moved_at``
        (default now), the moment the ref moved, not from its commit time, which
        lies before the facts it replaces.
        """
        clock = Clock()
        git.check()
        after = git.resolve(rev)
        commit = git.commit(after)
        branch = self._branch_state(repo, ref)
        base = branch.get("head") if branch else None
        # A push descends from the head: one git call says so (and that git has the head).
        follows = False
        if base is not None and base != after and valid_sha(base):
            follows = git.is_ancestor(base, after)
        known = follows or (base is not None and git.has_commit(base))
        moved = base is not None and base != after and not follows
        valid_at = (moved_at or datetime.now(UTC)) if moved else commit.committed_at
        valid_at = _after_previous(valid_at, branch)
        mode = "unchanged" if base == after else ("incremental" if known else "full")
        snapshot = Snapshot(repo, ref, commit, valid_at)
        projection = CodeProjection(self.store.ontology, snapshot, ModuleIndex({}, []))
        result = IndexResult(repo, ref, after, base, mode, rewind=moved)
        run = Run(git, snapshot, result, clock, projection)
        if self.statements is not None:
            run.statements = self.statements.get(repo, ref)
        return run

    def _read_tree(self, run: Run) -> None:
        """List the tree, detect packages, and parse what the cache does not hold."""
        snap = run.snapshot
        kept = self.listings.get(snap.repo, snap.ref) if self.listings is not None else None
        listing = list_tree(run.git, snap.commit.sha, _supported, self.max_file_bytes, kept)
        if self.listings is not None:
            self.listings.keep(snap.repo, snap.ref, listing)
        selection = listing.selection()  # counts unreadable names
        run.packages = list(listing.packages)
        run.clock.lap("list")
        run.reusable = self.cache.load(snap.repo, snap.ref, head=run.result.base)
        if run.reusable.commit is not None and run.reusable.commit == run.result.base:
            run.previous = run.reusable
        run.extracts, by_content = self._parse(run, selection.files)
        selection.skipped.update(by_content)
        run.result.skipped = dict(selection.skipped)
        run.result.files_total = len(run.extracts.files)
        run.clock.lap("parse")
        files = {p: e for p, (_, e) in run.extracts.files.items()}
        held = run.statements
        run.index = ModuleIndex(files, run.packages, held.modules if held is not None else None)
        if held is not None:
            held.modules = run.index
        run.projection = CodeProjection(self.store.ontology, snap, run.index)

    def _project(self, run: Run, write: set[str]) -> tuple[set[str], list[Fact], list[Fact]]:
        """Resolve the files to write and turn them into facts; the files to re-sync
        (those whose facts differ from what the graph holds at the head) and their facts.

        A dependent re-resolved because something it may see changed usually resolves
        as before: the digest of its facts equals the head's (kept with the head's
        extracts, :attr:`ExtractSet.digests`), and it is neither read back nor written
        (Django, a return change seen by 2,137 files: 8 of them had other facts).
        """
        resolver = run.ensure_resolver()
        result = run.result
        held = run.previous.digests
        digests: dict[str, bytes] = {}
        synced: set[str] = set()
        states: list[Fact] = []
        edges: list[Fact] = []
        modules: set[str] = set()
        for path in sorted(write):
            blob, extract = run.extracts.files[path]
            resolution = resolver.resolve_file(path)
            file_states = run.projection.file_states(path, extract, resolution, blob)
            file_edges = run.projection.file_edges(path, extract, resolution, run.packages)
            digests[path] = facts_digest([*file_states, *file_edges])
            result.lines += extract.lines
            result.symbols += len(extract.symbols)
            result.calls_resolved += sum(len(c.lines) for c in resolution.calls)
            result.calls_unresolved += sum(len(v) for v in resolution.unresolved.values())
            result.parse_errors += int(extract.has_errors)
            if held.get(path) == digests[path]:
                continue
            synced.add(path)
            if run.stream is not None:  # the file's own facts go now (strata.code.stream)
                file_states, file_edges = run.stream.add(file_states, file_edges)
            for fact in file_states:
                if fact.label == "Module":  # one per imported module, not one per import
                    name = str(fact.identity["name"])
                    if name in modules:
                        continue
                    modules.add(name)
                states.append(fact)
            edges.extend(file_edges)
        result.files_written = len(write)
        result.files_same = len(write) - len(synced)
        result.flow_files_read = resolver.flow.files_read
        resolver.flow.keep()  # the next push of this repository rebases its solver
        # What the graph will hold once this run's write lands: the head's digests of
        # the files not re-resolved, this run's of the rest (a deleted file has none).
        kept = {p: d for p, d in held.items() if p in run.extracts.files and p not in write}
        run.extracts.digests = {**kept, **digests}
        run.clock.lap("resolve")
        return synced, states, edges

    def _changed_symbols(self, run: Run, write: set[str], deleted: set[str]) -> None:
        """Symbols that appeared, vanished or changed body in this run (for trace settle)."""
        changed: list[str] = []
        paths: list[str] = []
        for path in sorted(write | deleted):
            old = run.previous.files.get(path)
            new = run.extracts.files.get(path)
            before = {s.qualname: s.body_hash for s in old[1].symbols} if old else {}
            after = {s.qualname: s.body_hash for s in new[1].symbols} if new else {}
            if old is not None and new is not None and old[0] == new[0]:
                continue  # same blob: a dependent re-resolved, its symbols did not change
            moved = [q for q in before.keys() | after.keys() if before.get(q) != after.get(q)]
            if moved or (old is None) != (new is None):
                paths.append(path)
            changed.extend(run.projection.symbol_ref(path, q).key for q in sorted(moved))
        run.result.changed_symbols = changed
        run.result.changed_paths = paths

    def _repository_facts(self, run: Run) -> tuple[list[Fact], list[Fact]]:
        """Repository, commit, packages and Branch head, with the edges between them."""
        symbols = sum(len(e.symbols) for _, e in run.extracts.files.values())
        states, edges = run.projection.repository_facts(
            run.packages,
            files=run.result.files_total,
            symbols=symbols,
            skipped=sum(run.result.skipped.values()),
        )
        return list(states), list(edges)

    def index_history(
        self, git: Git, repo: str, ref: str, commits: Iterable[str]
    ) -> list[IndexResult]:
        """Index first-parent commits oldest first, each an incremental step from the last.

        Commits the indexed head already covers (the head and its ancestors) are
        skipped, and reported as one ``unchanged`` result: running the same
        history again changes nothing and is not an error.
        """
        pending = list(commits)
        covered = self._covered(git, repo, ref, pending)
        results: list[IndexResult] = []
        if covered:
            clock = Clock()
            head = self._branch_state(repo, ref) or {}
            done = IndexResult(repo, ref, pending[covered - 1], head.get("head"), "unchanged")
            done.seconds = clock.done()
            results.append(done)
        results.extend(self.index(git, repo, ref, sha) for sha in pending[covered:])
        return results

    def _covered(self, git: Git, repo: str, ref: str, commits: list[str]) -> int:
        """How many of ``commits`` (a first-parent chain, oldest first) the indexed head
        already holds. Along such a chain ancestry is monotonic, so a binary search
        asks git O(log n) times."""
        branch = self._branch_state(repo, ref)
        head = branch.get("head") if branch else None
        if not isinstance(head, str) or not git.has_commit(head):
            return 0
        low, high = 0, len(commits)  # commits[:low] are covered, commits[high:] are not
        while low < high:
            mid = (low + high) // 2
            if commits[mid] == head or git.is_ancestor(commits[mid], head):
                low = mid + 1
            else:
                high = mid
        return low

    def delete_branch(self, repo: str, ref: str, *, at: datetime | None = None) -> IndexResult:
        """The ref was deleted at ``at`` (default now): close every open fact it scopes
        (files, symbols, their edges, packages, the head) at that moment.

        Nothing is removed: as of before ``at`` the branch reads as it was. The
        head closes last, so a run cut short is finished by running it again;
        a ref that is not indexed (or already deleted) changes nothing.
        """
        clock = Clock()
        branch = self._branch_state(repo, ref)
        zero = "0" * 40
        if branch is None:
            result = IndexResult(repo, ref, zero, None, "unchanged")
            result.seconds = clock.done()
            self.progress("done", result.as_dict())
            return result
        result = IndexResult(repo, ref, zero, str(branch.get("head")), "deleted")
        when = _after_previous(at or datetime.now(UTC), branch)
        file_node = self.store.ontology.node("File")
        paths = sorted(self.code_reads.open_file_paths(repo, ref))
        scopes = [file_node.make_key({"repo": repo, "ref": ref, "path": p}) for p in paths]
        branch_key = self.store.ontology.node("Branch").make_key({"repo": repo, "ref": ref})
        files = self.store.closures("code", scopes, [], at=when, repo=repo)
        head = self.store.closures("code", [branch_key], [], at=when, repo=repo)
        last: list[Fact] = [
            f for f in head.states if isinstance(f, StateFact) and f.label == "Branch"
        ]
        self.sync.send([*files.states, *files.edges], result)
        self.sync.send([*head.edges, *(f for f in head.states if f not in last)], result)
        self.sync.send(last, result)
        result.files_deleted = len(paths)
        result.changed_paths = paths
        result.seconds = clock.done()
        self.progress("done", result.as_dict())
        return result

    # -- helpers ---------------------------------------------------------------------

    def _branch_state(self, repo: str, ref: str) -> dict[str, Any] | None:
        key = self.store.ontology.node("Branch").make_key({"repo": repo, "ref": ref})
        state = self.reads.node_current("Branch", key)
        if state is None:
            return None
        return {**state.state.props, "valid_at": state.state.valid_at}

    def _parse(self, run: Run, files: list[TreeEntry]) -> tuple[ExtractSet, dict[str, int]]:
        """Extracts of ``files``: from the previous run's cache by blob, else parsed."""
        cached = run.reusable.by_blob()
        held = run.reusable.files
        found: dict[str, tuple[str, FileExtract]] = {}
        missing = [e for e in files if e.blob not in cached]
        skipped: dict[str, int] = {}
        for entry in files:
            same = held.get(entry.path)
            if same is not None and same[0] == entry.blob:
                # The very object of the last run: what the flow's index holds is current.
                found[entry.path] = same
            elif entry.blob in cached:
                found[entry.path] = (entry.blob, _moved(cached[entry.blob], entry.path))
        self.progress("parsing", {"files": len(missing), "cached": len(files) - len(missing)})
        todo: list[tuple[TreeEntry, bytes]] = []
        for entry, data in run.git.iter_blob_texts(missing):
            reason = skip_reason_for_content(data)
            if reason is not None:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            todo.append((entry, data))
        parsed = self._parse_all(run, [(e.path, d) for e, d in todo], [e.blob for e, _ in todo])
        for (entry, _), extract in zip(todo, parsed, strict=True):
            if extract is None:  # its parse ran out of time (strata.code.parallel)
                skipped["parse_timeout"] = skipped.get("parse_timeout", 0) + 1
                continue
            found[entry.path] = (entry.blob, extract)
        run.result.files_parsed = len(todo)
        # Tree order whichever came from the cache: the resolution reads files in order.
        out = ExtractSet(files={e.path: found[e.path] for e in files if e.path in found})
        return out, skipped

    def _parse_all(
        self, run: Run, items: list[tuple[str, bytes]], blobs: list[str]
    ) -> list[FileExtract | None]:
        """Parse in the one helper the process keeps below the threshold (helpers
        cost ~0.3 s to start), else in several, which work in a Celery prefork child
        too; their answers also go to the run's cache file as they come
        (:class:`EarlySet`). Never in this process: a parse that never ends could
        not be stopped (strata.code.parallel)."""
        workers = min(self.workers, os.cpu_count() or 1)
        if not items:
            return []
        if len(items) < PARALLEL_PARSE_MIN_FILES or workers <= 1:
            return parse_guarded(items)
        run.result.parse_workers = workers
        snap = run.snapshot
        run.early = self.cache.early(snap.repo, snap.ref, snap.commit.sha)
        return parse_parallel(items, workers, keys=blobs, sink=run.early.add)


def _after_previous(valid_at: datetime, branch: dict[str, Any] | None) -> datetime:
    """``valid_at``, moved just past the indexed head's time if it is not later
    (clock skew between commits, or a move dated before the last index)."""
    previous = branch.get("valid_at") if branch else None
    if isinstance(previous, datetime) and valid_at <= previous:
        return previous + timedelta(microseconds=1)
    return valid_at


def _moved(extract: FileExtract, path: str) -> FileExtract:
    """A cached extract of the same blob seen at another path (a copy or a rename)."""
    if extract.path == path:
        return extract
    from dataclasses import replace

    return replace(extract, path=path)

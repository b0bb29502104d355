"""A first index of many files writes each file's own facts while the run resolves
(strata.code.stream), and the graph is the one the write at the end makes."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.code import sync as sync_module
from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.code.pending import PendingWrites
from strata.code.result import IndexResult
from strata.code.stream import STREAM_MIN_FILES, STREAM_PENDING_PER_WORKER
from strata.errors import TransientDatabaseError
from strata.facts import Fact
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore, WriteResult
from strata.ontology import Ontology
from strata.writers import CodeWriter
from strata.writers.base import BatchStream
from tests.gitrepo import GitRepo

SOURCE = Path(__file__).resolve().parents[3] / "src" / "strata"
C1 = datetime(2025, 10, 1, tzinfo=UTC)

# Every current fact of a repository, its name taken out of the keys (two names, one tree).
CURRENT = """
MATCH (a)-[r]->(b)
WHERE r.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN type(r) AS type, replace(a.key, $repo, '') AS src, replace(b.key, $repo, '') AS dst,
       r.hash AS hash
"""

# Every version of a repository's facts: how many, how many no longer believed, and
# how many of those were believed for a while (recorded before their belief ended).
VERSIONS = """
MATCH ()-[r]->()
WHERE r.repo = $repo
RETURN count(r) AS versions, count(r.expired_at) AS retracted,
       count(CASE WHEN r.created_at < r.expired_at THEN 1 END) AS believed_for_a_while
"""
# Current facts in the files' scopes (not the branch's own: repository, commit, head).
CURRENT_IN_FILES = """
MATCH ()-[r]->()
WHERE r.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL
  AND r.scope IS NOT NULL AND r.scope <> $branch
RETURN count(r) AS n
"""


def _graph(gateway: Gateway, repo: str) -> set[tuple[Any, ...]]:
    return {tuple(r.values()) for r in gateway.read(CURRENT, repo=repo)}


def _indexer(gateway: Gateway, ontology: Ontology, cache: Path, batch_size: int) -> CodeIndexer:
    return CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(cache),
        batch_size=batch_size,
    )


def _at_end(
    gateway: Gateway,
    ontology: Ontology,
    cache: Path,
    batch_size: int,
    tree: tuple[GitRepo, str],
    name: str,
    monkeypatch: pytest.MonkeyPatch,
) -> IndexResult:
    """The same tree indexed without streaming (every fact written at the end): the
    graph a streamed run must equal."""
    repo, sha = tree
    with monkeypatch.context() as patched:
        patched.setattr(sync_module, "STREAM_MIN_FILES", 10**9)
        return _indexer(gateway, ontology, cache, batch_size).index(
            Git(repo.path), name, "main", sha
        )


def _failing(indexer: CodeIndexer, name: str, sha: str, repo: GitRepo, fail_at: int) -> None:
    """Index ``repo`` with the ``fail_at``-th fresh batch failing as a dropped
    connection would; the run must raise it."""
    write = CodeWriter.write
    sent: list[int] = []

    def fails(self: CodeWriter, facts: list[Fact], **kw: Any) -> WriteResult:
        if kw.get("fresh"):
            sent.append(len(facts))
            if len(sent) == fail_at:
                raise TransientDatabaseError("the connection dropped")
        return write(self, facts, **kw)

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(CodeWriter, "write", fails)
        with pytest.raises(TransientDatabaseError):
            indexer.index(Git(repo.path), name, "main", sha)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[GitRepo, str]:
    """This repository's own package: a few hundred files calling each other."""
    repo = GitRepo(tmp_path / "tree")
    for path in sorted(SOURCE.rglob("*.py")):
        repo.write(f"strata/{path.relative_to(SOURCE).as_posix()}", path.read_bytes())
    return repo, repo.commit("the tree", C1)


class TestStreamedFirstIndex:
    def test_the_graph_equals_the_one_written_at_the_end(
        self,
        tree: tuple[GitRepo, str],
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        repo, sha = tree
        streamed = _indexer(gateway, ontology, tmp_path / "a", 300).index(
            Git(repo.path), f"streamed-{unique}", "main", sha
        )
        at_end = _at_end(
            gateway, ontology, tmp_path / "b", 300, tree, f"at-end-{unique}", monkeypatch
        )
        assert streamed.facts_streamed > streamed.facts // 3  # most of a file is its own
        assert at_end.facts_streamed == 0
        assert (streamed.facts, streamed.created) == (at_end.facts, at_end.created)
        assert streamed.changed_nodes
        assert len(streamed.changed_nodes) == len(at_end.changed_nodes)
        graph = _graph(gateway, f"streamed-{unique}")
        assert len(graph) > 5000
        assert graph == _graph(gateway, f"at-end-{unique}")
        assert PendingWrites(gateway).read(f"streamed-{unique}", "main") is None

    def test_a_slow_database_holds_the_resolver_back_not_the_batches(
        self,
        tree: tuple[GitRepo, str],
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Writes slower than resolving: sends wait, so at most the bound of batches is
        ever queued (unbounded, the whole run's facts queued in memory), and the graph
        is the same."""
        repo, sha = tree
        write, send = CodeWriter.write, BatchStream.send
        in_flight: list[int] = []

        def slow(self: CodeWriter, facts: list[Fact], **kw: Any) -> WriteResult:
            if kw.get("fresh"):
                time.sleep(0.05)
            return write(self, facts, **kw)

        def counted(self: BatchStream, batch: Any) -> None:
            send(self, batch)
            in_flight.append(len(self._pending))

        indexer = _indexer(gateway, ontology, tmp_path / "a", 100)
        with monkeypatch.context() as patched:
            patched.setattr(CodeWriter, "write", slow)
            patched.setattr(BatchStream, "send", counted)
            slowed = indexer.index(Git(repo.path), f"slowed-{unique}", "main", sha)
        bound = STREAM_PENDING_PER_WORKER * indexer.workers
        assert len(in_flight) > 3 * bound  # enough batches to have piled up
        assert max(in_flight) < bound  # a send that filled the bound waited for one
        assert slowed.facts_streamed > slowed.facts // 3
        _at_end(gateway, ontology, tmp_path / "b", 100, tree, f"at-end-{unique}", monkeypatch)
        assert _graph(gateway, f"slowed-{unique}") == _graph(gateway, f"at-end-{unique}")

    def test_a_failed_batch_stops_the_run_and_the_next_one_completes_the_graph(
        self,
        tree: tuple[GitRepo, str],
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        repo, sha = tree
        name = f"broken-{unique}"
        indexer = _indexer(gateway, ontology, tmp_path / "cache", 200)
        _failing(indexer, name, sha, repo, 3)
        # Two batches had landed; the failed run took them back: nothing of the ref
        # reads as current, every version it wrote is kept with its belief ended.
        assert not gateway.read(CURRENT, repo=name)
        kept = gateway.read(VERSIONS, repo=name)[0]
        assert kept["versions"] > 2 * 100  # the two batches' facts, none deleted
        assert kept["retracted"] == kept["versions"]
        assert kept["believed_for_a_while"] == kept["versions"]  # created_at < expired_at
        assert PendingWrites(gateway).read(name, "main") is None  # the run's own note
        # The next run is a first index again: it streams, and completes the graph.
        again = indexer.index(Git(repo.path), name, "main", sha)
        assert again.mode == "full"
        assert again.facts_streamed > again.facts // 3
        _at_end(gateway, ontology, tmp_path / "b", 200, tree, f"whole-{unique}", monkeypatch)
        assert _graph(gateway, name) == _graph(gateway, f"whole-{unique}")
        assert PendingWrites(gateway).read(name, "main") is None

    def test_a_failed_first_index_leaves_the_closed_history_of_its_ref_as_it_was(
        self,
        tree: tuple[GitRepo, str],
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
    ) -> None:
        """A branch indexed, deleted (its facts closed), then pushed again: the new
        first index fails; only its own versions are taken back."""
        repo, sha = tree
        name = f"again-{unique}"
        indexer = _indexer(gateway, ontology, tmp_path / "cache", 200)
        indexer.index(Git(repo.path), name, "main", sha)
        indexer.delete_branch(name, "main", at=datetime(2025, 11, 1, tzinfo=UTC))
        before = gateway.read(VERSIONS, repo=name)[0]
        assert before["retracted"] == 0
        _failing(indexer, name, sha, repo, 2)
        after = gateway.read(VERSIONS, repo=name)[0]
        assert after["versions"] > before["versions"]  # the first batch had landed
        assert after["retracted"] == after["versions"] - before["versions"]
        # The repository's node and shared modules outlive a branch; its files do not.
        branch = ontology.node("Branch").make_key({"repo": name, "ref": "main"})
        assert gateway.read(CURRENT_IN_FILES, repo=name, branch=branch) == [{"n": 0}]


@pytest.mark.parametrize("reporter_fails", [False, True])
def test_a_failed_first_write_of_a_few_transactions_is_taken_back(
    gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str, reporter_fails: bool
) -> None:
    """Below the streaming threshold a first index still writes in several
    transactions once it is larger than a batch; one failing takes the files' facts back
    (and a progress reporter failing then does not hide the run's own error)."""
    repo = GitRepo(tmp_path / "small")
    for i in range(20):
        body = f"def f{i}():\n    return g{i}()\n\n\ndef g{i}():\n    return 1\n"
        repo.write(f"pkg/m{i}.py", body)
    sha = repo.commit("files", C1)
    name = f"few-{unique}"
    indexer = _indexer(gateway, ontology, tmp_path / "cache", 20)
    reported: list[dict[str, Any]] = []

    def progress(phase: str, counters: dict[str, Any]) -> None:
        if phase == "retracted":
            reported.append(counters)
            if reporter_fails:
                raise RuntimeError("the job record is unreachable")

    indexer.progress = indexer.sync.progress = progress
    _failing(indexer, name, sha, repo, 2)  # raises the write's error, not the reporter's
    assert reported
    assert reported[0]["facts"] >= 20  # the first batch's
    branch = ontology.node("Branch").make_key({"repo": name, "ref": "main"})
    in_files = gateway.read(CURRENT_IN_FILES, repo=name, branch=branch)
    assert in_files == [{"n": 0}]
    assert gateway.read(VERSIONS, repo=name)[0]["retracted"] == reported[0]["facts"]
    assert PendingWrites(gateway).read(name, "main") is None
    again = indexer.index(Git(repo.path), name, "main", sha)
    assert again.mode == "full"
    assert gateway.read(CURRENT_IN_FILES, repo=name, branch=branch)[0]["n"] > 40


@pytest.mark.parametrize(
    ("files", "streams"), [(STREAM_MIN_FILES - 1, False), (STREAM_MIN_FILES, True)]
)
def test_streaming_starts_at_the_threshold(
    files: int,
    streams: bool,
    gateway: Gateway,
    ontology: Ontology,
    tmp_path: Path,
    unique: str,
) -> None:
    repo = GitRepo(tmp_path / "small")
    for i in range(files):
        body = f"def f{i}():\n    return g{i}()\n\n\ndef g{i}():\n    return {i}\n"
        repo.write(f"pkg/m{i}.py", body)
    sha = repo.commit("files", C1)
    result = _indexer(gateway, ontology, tmp_path / "cache", 2000).index(
        Git(repo.path), f"edge-{files}-{unique}", "main", sha
    )
    assert result.files_written == files
    assert (result.facts_streamed > 0) is streams
    calls = gateway.read(
        "MATCH (a)-[r:CALLS]->(b) WHERE r.repo = $repo AND r.invalid_at IS NULL "
        "RETURN count(r) AS n",
        repo=f"edge-{files}-{unique}",
    )
    assert calls[0]["n"] == files  # f -> g in every file, either way

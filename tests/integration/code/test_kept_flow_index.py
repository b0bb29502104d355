"""A process that keeps the value flow's index between pushes indexes what a full index does.

The worker keeps one writers' index per repository and ref in its process
(:class:`~strata.code.flow.statements.StatementIndexes`), so a push re-reads the
changed files only, and the tree's listing (:class:`~strata.code.listing.Listings`),
patched by each push's diff. Three pushes on this repository's own ``src/strata``, two
repositories interleaved in one process, and a "restart" (a new process state
mid-way) must each leave the graph a full index of the same commit leaves.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata.code import indexer as indexer_module
from strata.code.cache import ExtractCache
from strata.code.flow.statements import StatementIndexes
from strata.code.indexer import CodeIndexer
from strata.code.listing import Listings
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology
from tests.gitrepo import GitRepo
from tests.integration.code.test_incremental_equivalence import SOURCE, _graph, _tree

DAY = [datetime(2025, 9, d, tzinfo=UTC) for d in range(1, 6)]
# Each push changes what values flow: a new caller of a flowed method, a renamed
# function other files call, and a new module reaching both.
PUSHES = [
    (
        "strata/temporal.py",
        "\n\ndef _kept_helper(value):\n    return plan_set(value, value, value)\n",
    ),
    (
        "strata/code/kept_probe.py",
        "from strata.code.cache import ExtractCache, ExtractSet\n\n\n"
        "def probe(directory):\n    cache = ExtractCache(directory)\n"
        "    found = cache.load('r', 'main')\n    return found.by_blob()\n",
    ),
    (
        "strata/code/kept_probe.py",
        "from strata.code.cache import ExtractCache\n\n\n"
        "def probe(directory):\n    return ExtractCache(directory).path('r', 'main')\n",
    ),
]


def _indexer(
    gateway: Gateway, ontology: Ontology, cache: Path, kept: StatementIndexes | None
) -> CodeIndexer:
    return CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(cache),
        statements=kept,
        listings=Listings() if kept is not None else None,  # the worker keeps both
    )


def _commits(repo: GitRepo) -> list[str]:
    _tree(repo)
    shas = [repo.commit("the tree", DAY[0])]
    for n, (path, text) in enumerate(PUSHES, start=1):
        before = (SOURCE / "temporal.py").read_text() if path == "strata/temporal.py" else ""
        repo.write(path, before + text)
        shas.append(repo.commit(f"push {n}", DAY[n]))
    return shas


class TestKeptFlowIndex:
    """Pushes through a kept index leave the graph a full index of the same commit leaves."""

    def test_two_repositories_and_a_restart(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
    ) -> None:
        one, two = GitRepo(tmp_path / "one"), GitRepo(tmp_path / "two")
        shas_one, shas_two = _commits(one), _commits(two)
        kept = StatementIndexes()
        worker = _indexer(gateway, ontology, tmp_path / "cache", kept)
        a, b = f"kept-a-{unique}", f"kept-b-{unique}"
        reads: list[int] = []
        for n in range(len(shas_one)):
            if n == 2:  # a restart: the process state is gone, the disk cache is not
                worker.cache.flush()
                kept = StatementIndexes()
                worker = _indexer(gateway, ontology, tmp_path / "cache", kept)
            first = worker.index(Git(one.path), a, "main", shas_one[n])
            second = worker.index(Git(two.path), b, "main", shas_two[n])
            reads.append(first.flow_files_read)
            assert first.mode == second.mode == ("full" if n == 0 else "incremental")
        files = reads[0]
        assert files > 150
        # Kept between pushes, the index re-reads the changed file alone; after the
        # restart it reads every file once, then only the changed one again.
        assert reads[1] == 1
        assert reads[2] == files + 1
        assert reads[3] == 1

        for name, repo, shas in ((a, one, shas_one), (b, two, shas_two)):
            full = f"{name}-full"
            _indexer(gateway, ontology, tmp_path / f"cache-{full}", None).index(
                Git(repo.path), full, "main", shas[-1]
            )
            kept_calls, kept_nodes = _graph(gateway, name)
            full_calls, full_nodes = _graph(gateway, full)
            assert len(full_calls) > 1000
            assert kept_calls == full_calls
            assert kept_nodes == full_nodes
        flowed = {c for c in _graph(gateway, a)[0] if c[0].endswith("kept_probe.py:probe")}
        assert flowed  # the probe's calls are resolved in the kept run too


ENGINES = """\
class Diesel:
    def start(self):
        return 1


class Electric:
    def start(self):
        return 2


def make():
    return {engine}()
"""

USER = """\
from app.engines import make


def drive_{n}():
    return make().start()
"""


class TestManyFilesReResolved:
    """A run that re-resolves more than MAX_REBASED_WRITES files answers from a new
    solver (as a full index does); at the bound it keeps the rebased one."""

    @pytest.mark.parametrize(("bound", "restarted"), [(4, False), (3, True)])
    def test_each_side_of_the_bound(
        self,
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
        bound: int,
        restarted: bool,
    ) -> None:
        monkeypatch.setattr(indexer_module, "MAX_REBASED_WRITES", bound)
        repo = GitRepo(tmp_path / "cars")
        repo.write("app/__init__.py", "")
        repo.write("app/engines.py", ENGINES.format(engine="Diesel"))
        for n in range(3):
            repo.write(f"app/user{n}.py", USER.format(n=n))
        first = repo.commit("diesel", DAY[0])
        repo.write("app/engines.py", ENGINES.format(engine="Electric"))
        second = repo.commit("electric", DAY[1])
        kept = StatementIndexes()
        worker = _indexer(gateway, ontology, tmp_path / "cache", kept)
        name = f"bound-{unique}"
        worker.index(Git(repo.path), name, "main", first)
        before = kept.get(name, "main").solver
        assert before is not None
        result = worker.index(Git(repo.path), name, "main", second)
        assert result.files_written == 4  # the engines and their three callers
        after = kept.get(name, "main").solver
        assert after is not None
        assert (after is not before) is restarted
        full = f"bound-full-{unique}"
        _indexer(gateway, ontology, tmp_path / "cache-full", None).index(
            Git(repo.path), full, "main", second
        )
        assert _graph(gateway, name) == _graph(gateway, full)

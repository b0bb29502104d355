"""Flow-resolved calls in the real Neo4j: a return annotation changed in one file moves
the edges of callers two files away, whose own files did not change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.code.pending import PendingWrites
from strata.code.reads import CodeReads
from strata.code.result import IndexResult
from strata.code.sync import Sync
from strata.errors import TransientDatabaseError
from strata.facts import Fact, StateFact
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology
from strata.temporal import AsOf
from tests.gitrepo import GitRepo

C1 = datetime(2025, 5, 1, tzinfo=UTC)
C2 = datetime(2025, 6, 1, tzinfo=UTC)

ENGINES = """\
class Diesel:
    def start(self):
        return "rumble"


class Electric:
    def start(self):
        return "hum"
"""

FACTORY = """\
from app.engines import Diesel, Electric


def make_engine(kind) -> {returns}:
    return registry_lookup(kind)
"""

GARAGE = """\
from app.factory import make_engine


def pick():
    return make_engine("default")
"""

DRIVER = """\
from app.garage import pick


def drive():
    engine = pick()
    engine.start()
"""


@pytest.fixture
def garage(tmp_path: Path) -> tuple[GitRepo, list[str]]:
    repo = GitRepo(tmp_path / "garage")
    repo.write("app/__init__.py", "")
    repo.write("app/engines.py", ENGINES)
    repo.write("app/factory.py", FACTORY.format(returns="Diesel"))
    repo.write("app/garage.py", GARAGE)
    repo.write("app/driver.py", DRIVER)
    shas = [repo.commit("diesel engines", C1)]
    repo.write("app/factory.py", FACTORY.format(returns="Electric"))
    shas.append(repo.commit("electric engines", C2))
    return repo, shas


def callees(
    reads: CodeReads, ontology: Ontology, repo: str, when: datetime
) -> list[tuple[str, str]]:
    drive = ontology.node("Symbol").make_key(
        {"repo": repo, "ref": "main", "path": "app/driver.py", "qualname": "drive"}
    )
    hits = reads.callees(drive, AsOf.at(when + timedelta(days=1)), depth=1, first=50)
    return sorted((h.key.rsplit("|", 1)[-1], h.resolution) for h in hits)


class TestReturnAnnotationChange:
    """The caller of the caller follows a changed return type."""

    def test_full_index_of_each_commit(
        self,
        garage: tuple[GitRepo, list[str]],
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        repo, shas = garage
        first, second = f"garage-a-{unique}", f"garage-b-{unique}"
        indexer.index(Git(repo.path), first, "main", shas[0])
        indexer.index(Git(repo.path), second, "main", shas[1])
        assert callees(code_reads, ontology, first, C1) == [
            ("Diesel.start", "flow"),
            ("pick", "import"),
        ]
        assert callees(code_reads, ontology, second, C2) == [
            ("Electric.start", "flow"),
            ("pick", "import"),
        ]

    def test_incremental(
        self,
        garage: tuple[GitRepo, list[str]],
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        repo, shas = garage
        name = f"garage-{unique}"
        results = indexer.index_history(Git(repo.path), name, "main", shas)
        assert [r.mode for r in results] == ["full", "incremental"]
        assert callees(code_reads, ontology, name, C1) == [
            ("Diesel.start", "flow"),
            ("pick", "import"),
        ]
        assert callees(code_reads, ontology, name, C2) == [
            ("Electric.start", "flow"),
            ("pick", "import"),
        ]


LOCAL_FACTORY = """\
from app.engines import Diesel, Electric


def make_engine(kind):
{extra}    engine = {engine}()
    return engine
"""
C3 = datetime(2025, 7, 1, tzinfo=UTC)


class TestBodyChange:
    """A body edit reaches callers two files away when the returned value moved, and
    no other file when it did not (only the edited file is written)."""

    def test_incremental_follows_the_returned_local_only(
        self,
        tmp_path: Path,
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        repo = GitRepo(tmp_path / "garage")
        repo.write("app/__init__.py", "")
        repo.write("app/engines.py", ENGINES)
        repo.write("app/garage.py", GARAGE)
        repo.write("app/driver.py", DRIVER)
        shas = []
        for when, extra, engine in (
            (C1, "", "Diesel"),
            (C2, "    spare = Diesel\n", "Electric"),  # the returned local moved
            (C3, "    spare = Diesel\n    other = Electric\n", "Electric"),  # a local only
        ):
            repo.write("app/factory.py", LOCAL_FACTORY.format(extra=extra, engine=engine))
            shas.append(repo.commit(f"{engine} {len(extra)}", when))
        name = f"body-{unique}"
        results = indexer.index_history(Git(repo.path), name, "main", shas)
        assert [r.mode for r in results] == ["full", "incremental", "incremental"]
        # The factory, its caller, the caller's caller, and the engines (`Diesel()` is no
        # longer called: what its parameters were passed moved).
        assert results[1].files_written == 4
        assert results[2].files_written == 1  # the factory alone
        for n, (when, start) in enumerate(
            ((C1, "Diesel.start"), (C2, "Electric.start"), (C3, "Electric.start"))
        ):
            full = f"body-full{n}-{unique}"
            indexer.index(Git(repo.path), full, "main", shas[n])
            expected = [(start, "flow"), ("pick", "import")]
            assert callees(code_reads, ontology, full, when) == expected
            assert callees(code_reads, ontology, name, when) == expected


C4 = datetime(2025, 8, 1, tzinfo=UTC)


class TestSameFacts:
    """A file re-resolved because something it may see changed, whose facts come out as
    the graph holds them, is not re-synced; the head's digests follow every run, so a
    later change of that file's facts is written all the same."""

    def test_a_dependent_resolving_as_before_is_not_re_synced(
        self,
        garage: tuple[GitRepo, list[str]],
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        repo, shas = garage
        repo.write("app/factory.py", FACTORY.format(returns="Diesel"))
        shas.append(repo.commit("diesel again", C3))  # back: drive() calls Diesel.start
        repo.write("app/factory.py", FACTORY.format(returns="Electric"))
        shas.append(repo.commit("electric again", C4))
        name = f"same-{unique}"
        results = indexer.index_history(Git(repo.path), name, "main", shas)
        assert [r.mode for r in results] == ["full", *["incremental"] * 3]
        for result in results[1:]:
            # The factory, pick()'s file and drive()'s are re-resolved; pick() still
            # calls make_engine (its facts are the head's), drive() calls another start.
            assert result.files_written == 3
            assert result.files_same == 1
        for when, start in ((C1, "Diesel.start"), (C2, "Electric.start")):
            expected = [(start, "flow"), ("pick", "import")]
            assert callees(code_reads, ontology, name, when) == expected
        for when, start in ((C3, "Diesel.start"), (C4, "Electric.start")):
            expected = [(start, "flow"), ("pick", "import")]
            assert callees(code_reads, ontology, name, when) == expected

    def test_a_write_that_stops_halfway_is_re_synced_by_the_next_run(
        self,
        garage: tuple[GitRepo, list[str]],
        gateway: Gateway,
        ontology: Ontology,
        code_reads: CodeReads,
        tmp_path: Path,
        unique: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        repo, shas = garage
        repo.write("app/factory.py", FACTORY.format(returns="Diesel"))
        shas.append(repo.commit("diesel again", C3))
        # Batches of a few facts: the file facts land in transactions before the head.
        indexer = CodeIndexer(
            FactStore(gateway, ontology),
            Reads(gateway, ontology),
            cache=ExtractCache(tmp_path / "cache"),
            batch_size=4,
        )
        name = f"halfway-{unique}"
        git = Git(repo.path)
        indexer.index(git, name, "main", shas[0])
        send = Sync.send

        def fail_at_the_head(
            self: Sync, facts: list[Fact], result: IndexResult, **kw: bool
        ) -> None:
            if any(isinstance(f, StateFact) and f.label == "Branch" for f in facts):
                raise TransientDatabaseError("the connection dropped before the head")
            send(self, facts, result, **kw)

        with monkeypatch.context() as patched:
            patched.setattr(Sync, "send", fail_at_the_head)
            with pytest.raises(TransientDatabaseError):
                indexer.index(git, name, "main", shas[1])  # drive() -> Electric.start written
        noted = PendingWrites(gateway).read(name, "main")
        assert noted is not None
        assert noted.commit == shas[1]
        assert {"app/factory.py", "app/driver.py"} <= noted.paths
        held = indexer.cache.held(name, "main")
        assert held is not None
        assert held.commit == shas[0]
        assert {"app/factory.py", "app/driver.py"}.isdisjoint(held.digests)
        assert "app/garage.py" in held.digests  # not written: its facts are the head's
        # Back to the head's content: drive()'s facts equal the head's digest, but the
        # failed run left other facts in the graph; they are read back and corrected.
        result = indexer.index(git, name, "main", shas[2])
        assert result.mode == "incremental"
        assert result.base == shas[0]  # the head never moved to the failed run's commit
        expected = [("Diesel.start", "flow"), ("pick", "import")]
        assert callees(code_reads, ontology, name, C3) == expected
        assert PendingWrites(gateway).read(name, "main") is None  # the head landed

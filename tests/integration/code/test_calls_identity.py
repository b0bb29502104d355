"""Against the real Neo4j: overloads stay one symbol across commits, impact leaves name-only
guesses out unless asked, and a library's exported API is marked ``public_api``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from strata.code.indexer import CodeIndexer
from strata.code.reads import CodeReads
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.ontology import Ontology
from strata.temporal import AsOf
from tests.gitrepo import GitRepo

C1 = datetime(2025, 7, 1, tzinfo=UTC)
C2 = datetime(2025, 8, 1, tzinfo=UTC)

# The micro-benchmark's overload case is the second commit; the first has no stubs.
READER_V2 = (
    Path(__file__).resolve().parents[2]
    / "fixtures/calls/python/decorators/overload_stubs/reader.py"
).read_text(encoding="utf-8")
READER_V1 = "".join(
    line
    for line in READER_V2.splitlines(keepends=True)
    if "overload" not in line and not line.rstrip().endswith("...")
)

USE = """\
from reader import Reader


def go():
    return Reader().chunks(4)
"""

GUESS = """\
class Widget:
    def frobnicate(self):
        return 1
"""

GUESS_USE = """\
def poke(thing):
    return thing.frobnicate()
"""

GUESS_TEST = """\
from guess_use import poke


def test_poke():
    assert poke(None)
"""

INIT = """\
from .api import get as get
from .api import _private


def configure():
    return _setup()


def _setup():
    return _private()
"""

API = """\
__all__ = ["get", "post"]


def get():
    return 1


def post():
    return 2


def helper():
    return 3


def _private():
    return 4
"""


GUESS_FILES = {"guess.py": GUESS, "guess_use.py": GUESS_USE, "test_guess.py": GUESS_TEST}


def index_files(tmp_path: Path, indexer: CodeIndexer, name: str, files: dict[str, str]) -> str:
    """Commit ``files`` at C1 into a fresh repository and index it as ``name``."""
    repo = GitRepo(tmp_path / name)
    for path, text in files.items():
        repo.write(path, text)
    indexer.index(Git(repo.path), name, "main", repo.commit("first", C1))
    return name


def _key(ontology: Ontology, repo: str, path: str, qualname: str) -> str:
    return ontology.node("Symbol").make_key(
        {"repo": repo, "ref": "main", "path": path, "qualname": qualname}
    )


def _at(when: datetime) -> AsOf:
    return AsOf.at(when + timedelta(days=1))


class TestOverloadIdentity:
    """Adding @overload stubs keeps the implementation's id, its callers and its history."""

    def test_overloads_added_in_a_later_commit(
        self,
        tmp_path: Path,
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        gateway: Gateway,
        unique: str,
    ) -> None:
        repo = GitRepo(tmp_path / "overloads")
        repo.write("reader.py", READER_V1)
        repo.write("use.py", USE)
        shas = [repo.commit("plain method", C1)]
        repo.write("reader.py", READER_V2)
        shas.append(repo.commit("typed overloads", C2))
        name = f"overloads-{unique}"
        indexer.index_history(Git(repo.path), name, "main", shas)

        chunks = _key(ontology, name, "reader.py", "Reader.chunks")
        for when in (C1, C2):
            view = code_reads.symbol(chunks, _at(when))
            assert view is not None, when
            callers = {h.key.rsplit("|", 1)[-1] for h in code_reads.callers(chunks, _at(when))}
            assert callers == {"Reader.all", "go"}, when
        # No second identity appeared for the stubs or the implementation.
        for stub in ("Reader.chunks#2", "Reader.chunks#3"):
            assert code_reads.symbol(_key(ontology, name, "reader.py", stub), _at(C2)) is None
        # One identity, one history: the state since C1 continues (a new version at C2,
        # where the symbol's lines moved), none closed without a successor.
        states = gateway.read(
            "MATCH (s:Symbol {key: $k})-[r:STATE]->(s) WHERE r.expired_at IS NULL "
            "RETURN toString(r.valid_at) AS v, r.invalid_at IS NULL AS open ORDER BY v",
            k=chunks,
        )
        assert states[0]["v"].startswith("2025-07-01")
        assert states[-1]["open"] is True
        raw = code_reads.callees(chunks, _at(C2))
        assert [h.key.rsplit("|", 1)[-1] for h in raw] == ["Reader.raw"]


class TestGuessesAndPublicApi:
    """impact without name-only guesses unless asked; exported names are entrypoints."""

    def test_impact_includes_guesses_only_when_asked(
        self,
        tmp_path: Path,
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        name = index_files(tmp_path, indexer, f"guesses-{unique}", GUESS_FILES)

        target = _key(ontology, name, "guess.py", "Widget.frobnicate")
        assert [h.resolution for h in code_reads.callers(target, _at(C1))] == ["name_only"]
        plain = code_reads.impact(target, _at(C1))
        assert plain.callers == []
        assert plain.tests == []
        guessed = code_reads.impact(target, _at(C1), include_guesses=True)
        assert [h.key.rsplit("|", 1)[-1] for h in guessed.callers] == ["poke", "test_poke"]
        assert [h.key.rsplit("|", 1)[-1] for h in guessed.tests] == ["test_poke"]

    def test_exported_api_is_marked_public_api(
        self,
        tmp_path: Path,
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        files = {"lib/__init__.py": INIT, "lib/api.py": API}
        name = index_files(tmp_path, indexer, f"library-{unique}", files)

        def entrypoint(path: str, qualname: str) -> object:
            view = code_reads.symbol(_key(ontology, name, path, qualname), _at(C1))
            assert view is not None, qualname
            return view.state.get("entrypoint")

        assert entrypoint("lib/api.py", "get") == "public_api"
        assert entrypoint("lib/api.py", "post") == "public_api"
        assert entrypoint("lib/api.py", "helper") is None
        assert entrypoint("lib/api.py", "_private") is None
        assert entrypoint("lib/__init__.py", "configure") == "public_api"
        assert entrypoint("lib/__init__.py", "_setup") is None


class TestReexportIncremental:
    """A package that re-exports a name from another module re-resolves its importers."""

    def test_changed_reexport_moves_the_call(
        self,
        tmp_path: Path,
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        repo = GitRepo(tmp_path / "reexport")
        repo.write("pkg/__init__.py", "from .a import f\n")
        repo.write("pkg/a.py", "def f():\n    return 1\n")
        repo.write("pkg/b.py", "def f():\n    return 2\n")
        repo.write("use.py", "from pkg import f\n\n\ndef run():\n    return f()\n")
        shas = [repo.commit("f from a", C1)]
        repo.write("pkg/__init__.py", "from .b import f\n")
        shas.append(repo.commit("f from b", C2))
        name = f"reexport-{unique}"
        results = indexer.index_history(Git(repo.path), name, "main", shas)
        assert [r.mode for r in results] == ["full", "incremental"]

        def callers(path: str, when: datetime) -> list[str]:
            key = _key(ontology, name, path, "f")
            return [h.key.rsplit("|", 1)[-1] for h in code_reads.callers(key, _at(when))]

        assert callers("pkg/a.py", C1) == ["run"]
        assert callers("pkg/b.py", C1) == []
        assert callers("pkg/a.py", C2) == []
        assert callers("pkg/b.py", C2) == ["run"]

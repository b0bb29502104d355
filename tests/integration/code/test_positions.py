"""Position is not content (ontology v4), against the real Neo4j: a line inserted at the
top of a file writes a handful of facts, and every as-of read still answers the lines of
its moment; a graph written under v3 reads the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.code.cache import ExtractCache
from strata.code.changes import CodeChanges
from strata.code.indexer import CodeIndexer, IndexResult
from strata.code.reads import CodeReads
from strata.facts import EdgeFact, NodeRef, StateFact
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology, load_ontology
from strata.settings import Settings
from strata.temporal import AsOf
from strata.trace.reads import TraceReads
from strata.writers import KnowledgeWriter, TraceWriter
from tests.gitrepo import GitRepo

C1 = datetime(2025, 5, 1, tzinfo=UTC)
C2 = datetime(2025, 6, 1, tzinfo=UTC)
C3 = datetime(2025, 7, 1, tzinfo=UTC)

# Twenty symbols, calls between them, an unresolved call inside a function and a
# file-level call at the bottom.
FUNCS = "".join(f"\n\ndef step{i}(x):\n    return step{i - 1}(x) + {i}\n" for i in range(1, 16))
BIG = (
    "import os\nfrom typing import Any\n\n\ndef step0(x):\n    return x\n"
    + FUNCS
    + '''

class Runner:
    """Runs the steps."""

    def run(self, x: Any) -> Any:
        mystery_call(x)
        x.get("k")
        return step15(x)

    def again(self, x: Any) -> Any:
        return self.run(x)


def main() -> None:
    print(os.getcwd(), Runner().run(1))


main()
'''
)
USER = """\
from big import step3


def use():
    return step3(1)


class A:
    def get(self, k):
        return k


class B:
    def get(self, k):
        return None
"""


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of ``text`` that contains ``needle``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def at(when: datetime) -> AsOf:
    return AsOf.at(when + timedelta(days=1))


def make_indexer(gateway: Gateway, ontology: Ontology, cache: Path) -> CodeIndexer:
    return CodeIndexer(
        FactStore(gateway, ontology), Reads(gateway, ontology), cache=ExtractCache(cache)
    )


class History:
    """A repository whose big.py gets a line at the top (C2), then a real change (C3)."""

    def __init__(self, tmp_path: Path, name: str) -> None:
        self.name = name
        self.repo = GitRepo(tmp_path / name)
        self.texts = [BIG, "# a header line\n" + BIG]
        self.texts.append(self.texts[1].replace("return step15(x)", "return step14(x) * 2"))
        self.repo.write("big.py", self.texts[0])
        self.repo.write("user.py", USER)
        self.shas = [self.repo.commit("first", C1)]
        self.repo.write("big.py", self.texts[1])
        self.shas.append(self.repo.commit("insert a line at the top", C2))
        self.repo.write("big.py", self.texts[2])
        self.shas.append(self.repo.commit("change run", C3))

    def index(self, indexer: CodeIndexer, step: int) -> IndexResult:
        return indexer.index(Git(self.repo.path), self.name, "main", self.shas[step])

    def line(self, step: int, needle: str) -> int:
        return line_of(self.texts[step], needle)


def key(ontology: Ontology, repo: str, path: str, qualname: str) -> str:
    return ontology.node("Symbol").make_key(
        {"repo": repo, "ref": "main", "path": path, "qualname": qualname}
    )


NEW_VERSIONS = """
MATCH (a)-[r]->(b)
WHERE r.repo = $repo AND r.valid_at = datetime($at) AND r.expired_at IS NULL
RETURN type(r) AS type, labels(a)[0] AS label, count(*) AS n
"""


CHANGED_SYMBOLS = """
MATCH (s:Symbol)-[r:STATE]->(s)
WHERE s.repo = $repo AND r.valid_at = datetime($at) AND r.expired_at IS NULL
RETURN s.qualname AS qualname
"""


def new_versions(gateway: Gateway, repo: str, when: datetime) -> dict[tuple[str, str], int]:
    rows = gateway.read(NEW_VERSIONS, repo=repo, at=when.isoformat().replace("+00:00", "Z"))
    return {(r["type"], r["label"]): int(r["n"]) for r in rows}


def check_lines(history: History, reads: CodeReads, ontology: Ontology, step: int) -> None:
    """Symbol spans, caller / callee lines and unresolved sites as of commit ``step``."""
    name, when = history.name, (C1, C2, C3)[step]
    run = key(ontology, name, "big.py", "Runner.run")
    step3 = key(ontology, name, "big.py", "step3")
    view = reads.symbol(step3, at(when))
    assert view is not None
    assert (view.state["line_start"], view.state["line_end"]) == (
        history.line(step, "def step3("),
        history.line(step, "return step2(x)"),
    )
    callers = reads.callers(step3, at(when))
    assert sorted((h.path, h.line, h.lines) for h in callers) == [
        ("big.py", history.line(step, "return step3(x)"), (history.line(step, "return step3("),)),
        ("user.py", 5, (5,)),
    ]
    assert callers.unresolved is not None
    runner = reads.callers(key(ontology, name, "big.py", "Runner"), at(when))
    assert [(h.path, h.line) for h in runner] == [("big.py", history.line(step, "Runner().run"))]
    callees = reads.callees(run, at(when))
    assert callees.unresolved is not None
    mystery, get = history.line(step, "mystery_call(x)"), history.line(step, 'x.get("k")')
    assert sorted((s.callee, s.line) for s in callees.unresolved.sample) == [
        ("mystery_call", mystery),
        ("x.get", get),
    ]
    assert view.state.get("unresolved_calls") is None
    run_view = reads.symbol(run, at(when))
    assert run_view is not None
    assert sorted(run_view.state["unresolved_calls"]) == [f"mystery_call@{mystery}", f"x.get@{get}"]
    seen = reads.unresolved_matching([key(ontology, name, "user.py", "A.get")], at(when))
    assert [(s.path, s.caller, s.callee, s.line) for s in seen.sample] == [
        ("big.py", "Runner.run", "x.get", get)
    ]
    found = reads.find_symbols(at(when), name="again", repo=name)
    assert [v.state["line_start"] for v in found] == [history.line(step, "def again(")]
    main_hits = reads.callers(key(ontology, name, "big.py", "main"), at(when))
    last = len(history.texts[step].splitlines())  # the file-level main() at the bottom
    assert [(h.label, h.line) for h in main_hits] == [("File", last)]


@pytest.fixture
def history(tmp_path: Path, unique: str) -> History:
    return History(tmp_path, f"pos-{unique}")


class TestOneLineAtTheTop:
    """Inserting a line above twenty symbols writes the File's new version, not one per symbol."""

    def test_a_handful_of_facts_and_the_lines_of_each_moment(
        self,
        history: History,
        indexer: CodeIndexer,
        code_reads: CodeReads,
        gateway: Gateway,
        ontology: Ontology,
    ) -> None:
        first = history.index(indexer, 0)
        assert first.symbols == 25  # twenty in big.py, five in user.py
        shifted = history.index(indexer, 1)
        # The File's version, the Branch head and the new Commit: nothing per symbol or edge.
        assert shifted.created <= 3, shifted.as_dict()
        assert new_versions(gateway, history.name, C2) == {
            ("STATE", "File"): 1,
            ("STATE", "Branch"): 1,
            ("STATE", "Commit"): 1,
        }
        for step in (0, 1):
            check_lines(history, code_reads, ontology, step)

    def test_a_real_change_is_a_version_and_history_has_the_lines(
        self,
        history: History,
        indexer: CodeIndexer,
        code_reads: CodeReads,
        gateway: Gateway,
        ontology: Ontology,
    ) -> None:
        for step in (0, 1, 2):
            history.index(indexer, step)
        changed = gateway.read(CHANGED_SYMBOLS, repo=history.name, at=C3.isoformat())
        # Runner.run's body changed, and with it the text of the class that holds it.
        assert sorted(r["qualname"] for r in changed) == ["Runner", "Runner.run"]
        run = key(ontology, history.name, "big.py", "Runner.run")
        versions = code_reads.history(run)
        assert [v.props["line_start"] for v in versions] == [
            history.line(1, "def run("),  # its last moment was C2's layout
            history.line(2, "def run("),
        ]
        assert [v.valid_at for v in versions] == [C1, C3]
        page = CodeChanges(gateway).page(history.name, C2, C3 + timedelta(days=1))
        assert [(c.change, c.qualname, c.line) for c in page.changes] == [
            ("modified", "Runner", history.line(2, "class Runner")),
            ("modified", "Runner.run", history.line(2, "def run(")),
        ]
        check_lines(history, code_reads, ontology, 2)
        for step in (0, 1):
            check_lines(history, code_reads, ontology, step)


class TestVersionThreeGraph:
    """Facts written under ontology v3 (absolute spans and lines) read the same under v4,
    and a v4 reindex over them keeps every moment's lines."""

    def test_v3_facts_read_and_mix_with_v4(
        self,
        history: History,
        gateway: Gateway,
        ontology: Ontology,
        settings: Settings,
        code_reads: CodeReads,
        tmp_path: Path,
    ) -> None:
        v3 = load_ontology(settings.ontology_dir, 3)
        old = make_indexer(gateway, v3, tmp_path / "cache-v3")
        history.index(old, 0)
        shifted = history.index(old, 1)
        assert shifted.created > 20  # v3 re-versions every symbol and edge below the line
        stored = key(ontology, history.name, "big.py", "step3")
        assert code_reads.symbol(stored, at(C2)).state["ontology"] == 3  # type: ignore[union-attr]
        for step in (0, 1):
            check_lines(history, code_reads, ontology, step)
        history.index(make_indexer(gateway, ontology, tmp_path / "cache-v4"), 2)
        assert code_reads.symbol(stored, at(C3)).state["ontology"] == ontology.version  # type: ignore[union-attr]
        for step in (0, 1, 2):
            check_lines(history, code_reads, ontology, step)
        run = key(ontology, history.name, "big.py", "Runner.run")
        assert [v.props["line_start"] for v in code_reads.history(run)][-1] == history.line(
            2, "def run("
        )


class TestTraceTargets:
    """A trace link's target symbol cites the span it had at the read's moment."""

    def test_link_target_lines(
        self, history: History, indexer: CodeIndexer, gateway: Gateway, ontology: Ontology
    ) -> None:
        for step in (0, 1):
            history.index(indexer, step)
        store = FactStore(gateway, ontology)
        identity = {"repo": history.name, "req_id": "REQ-001"}
        requirement = {
            "text": "The steps shall add.",
            "ears": "ubiquitous",
            "path": "r.md",
            "line": 1,
        }
        KnowledgeWriter(store).write([StateFact("Requirement", identity, requirement, C1)])
        req = NodeRef("Requirement", ontology.node("Requirement").make_key(identity))
        target = NodeRef("Symbol", key(ontology, history.name, "big.py", "step3"))
        link = {
            "status": "VALIDATED",
            "confidence": 1.0,
            "methods": ["m"],
            "commit": history.shas[0],
        }
        TraceWriter(store).write([EdgeFact("IMPLEMENTED_BY", req, target, history.name, link, C1)])
        reads = TraceReads(gateway)
        for step, when in enumerate((C1, C2)):
            (found,) = reads.links_from(req.key, at(when))
            assert found.other["line_start"] == history.line(step, "def step3(")
            (back,) = reads.links_into(target.key, at(when))
            assert back.other["line_end"] == history.line(step, "return step2(x)")

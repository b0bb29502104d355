"""The card run's defined states against the real Neo4j: a vanished package's card closes at
the commit that removed it; a push touching one package reads only that package's detail
(next to a 5,000-file package); two pushes racing on the same card leave one current card."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from strata.cards import CardService
from strata.cards.graph import FILES, SYMBOLS
from strata.cards.lint import lint_repository
from strata.cards.pipeline import CardPipeline
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.ontology import Ontology
from strata.temporal import AsOf
from tests.gitrepo import GitRepo
from tests.integration.cards.conftest import ALPHA_CORE, C1, C2, Indexed, push

BIG = 5000


class CountingGateway:
    """The real gateway, counting what each read returned (to see what a run reads)."""

    def __init__(self, inner: Gateway) -> None:
        self.inner = inner
        self.reads: list[tuple[str, int, Any]] = []

    def read(self, text: str, **params: Any) -> list[dict[str, Any]]:
        rows = self.inner.read(text, **params)
        self.reads.append((text, len(rows), params.get("paths")))
        return rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class TestVanishedPackage:
    """A card whose package is gone closes at that commit; as of before it still reads."""

    def test_closed_at_the_removing_commit(
        self,
        indexed: Indexed,
        indexer: CodeIndexer,
        service: CardService,
        gateway: Gateway,
        ontology: Ontology,
    ) -> None:
        CardPipeline(service).run(indexed.repo)
        for path in ("beta/pyproject.toml", "beta/beta/__init__.py", "beta/beta/service.py"):
            indexed.git.delete(path)
        indexed.git.delete("beta/tests/test_service.py")
        push(indexed, indexer, "drop beta", C2)
        result = CardPipeline(service).run(indexed.repo)
        assert [c.name for c in result.closed] == ["beta"]
        assert result.summary()["closed"] == ["beta"]
        assert [c.name for c in service.cards(indexed.repo)] == ["alpha"]
        before = service.cards(indexed.repo, as_of=AsOf.at(C2 - timedelta(days=1)))
        assert [c.name for c in before] == ["alpha", "beta"]
        assert [c.name for c, s in service.with_staleness(indexed.repo) if s.stale] == []
        report = lint_repository(gateway, ontology, indexed.repo)
        assert [f for f in report.findings if f.subject == "beta"] == []
        # idempotent: the next run closes nothing more
        assert CardPipeline(service).run(indexed.repo).closed == []

    def test_a_run_at_an_older_commit_closes_nothing_newer(
        self, indexed: Indexed, indexer: CodeIndexer, service: CardService
    ) -> None:
        indexed.git.write("gamma/pyproject.toml", '[project]\nname = "gamma"\n')
        indexed.git.write("gamma/gamma/__init__.py", "def g():\n    return 1\n")
        sha = push(indexed, indexer, "gamma", C2)
        CardPipeline(service).run(indexed.repo, commit=sha)
        result = CardPipeline(service).run(indexed.repo, commit=indexed.shas[0])
        assert result.closed == []
        assert sorted(c.name for c in result.superseded) == ["alpha", "beta"]
        assert sorted(c.name for c in service.cards(indexed.repo)) == ["alpha", "beta", "gamma"]


class TestRacingPushes:
    """Two pushes on the same card: one current card, never an older one over a newer one."""

    def test_a_late_run_of_an_older_push_leaves_the_newer_card(
        self, indexed: Indexed, indexer: CodeIndexer, service: CardService
    ) -> None:
        indexed.git.write("alpha/alpha/core.py", ALPHA_CORE.replace("x * 2", "x + x"))
        c2 = push(indexed, indexer, "alpha body", C2)
        newer = CardPipeline(service).run(indexed.repo, commit=c2)
        assert sorted(c.name for c in newer.rebuilt) == ["alpha", "beta"]
        late = CardPipeline(service).run(indexed.repo, commit=indexed.shas[0])
        assert [c.name for c in late.superseded] == ["alpha", "beta"]
        assert late.rebuilt == []
        assert {c.name: c.commit for c in service.cards(indexed.repo)} == {
            "alpha": c2,
            "beta": c2,
        }

    def test_two_runs_at_once_leave_one_current_card_each(
        self, indexed: Indexed, service: CardService
    ) -> None:
        errors: list[BaseException] = []

        def run() -> None:
            try:
                CardPipeline(service).run(indexed.repo)
            except BaseException as exc:  # the assertion below reports it
                errors.append(exc)

        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert errors == []
        cards = service.cards(indexed.repo)
        assert sorted(c.name for c in cards) == ["alpha", "beta"]  # one current version each
        assert all(c.ok for c in service.check(indexed.repo))


class TestPartialRead:
    """A push that touches one package reads only that package's symbols, whatever the size
    of the others (here one of 5,000 files)."""

    def test_only_the_touched_package_is_read(
        self, tmp_path: Path, indexer: CodeIndexer, gateway: Gateway, ontology: Ontology
    ) -> None:
        repo = GitRepo(tmp_path / "big")
        repo.write("big/pyproject.toml", '[project]\nname = "big"\n')
        for i in range(BIG):
            repo.write(f"big/big/m{i:04d}.py", f"def f{i}():\n    return {i}\n")
        repo.write("small/pyproject.toml", '[project]\nname = "small"\n')
        repo.write(
            "small/small/core.py", "from big.m0001 import f1\n\n\ndef s():\n    return f1()\n"
        )
        name = f"cards-big-{tmp_path.name[-8:]}"
        first = repo.commit("first", C1)
        indexer.index(Git(repo.path), name, "main", first)
        counting = CountingGateway(gateway)
        service = CardService(cast(Gateway, counting), ontology)
        built = CardPipeline(service).run(name)
        assert sorted(c.name for c in built.rebuilt) == ["big", "small"]
        [big] = [c for c in built.rebuilt if c.name == "big"]
        assert f"(and {BIG - 40} more)" in big.markdown  # a 5,000-file card stays small
        repo.write("small/small/core.py", "from big.m0001 import f1\n\n\ndef s():\n    return 2\n")
        second = repo.commit("small only", datetime(2025, 6, 1, tzinfo=UTC))
        indexer.index(Git(repo.path), name, "main", second)
        counting.reads.clear()
        result = CardPipeline(service).run(name)
        assert sorted(c.name for c in result.rebuilt) == ["big", "small"]  # big lost a caller
        counting.reads.clear()
        repo.write("small/small/core.py", "from big.m0001 import f1\n\n\ndef s():\n    return 3\n")
        third = repo.commit("small body", datetime(2025, 6, 2, tzinfo=UTC))
        indexer.index(Git(repo.path), name, "main", third)
        result = CardPipeline(service).run(name)
        assert [c.name for c in result.rebuilt] == ["small"]
        assert result.fresh == 1
        symbol_reads = [(rows, paths) for text, rows, paths in counting.reads if text == SYMBOLS]
        assert symbol_reads == [(1, ["small/small/core.py"])]
        # the skeleton lists every file with its hash (what staleness compares); nothing
        # else of the 5,000-file package is read
        assert [(text, rows) for text, rows, _ in counting.reads if rows > 50] == [(FILES, BIG + 1)]

"""Cards against the real Neo4j: compiled, stored, gated, corrupted, gone stale."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from strata.cards import CardService, check_card, export_cards, load_snapshot, parse_card
from strata.cards.model import Card, Claim
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.temporal import AsOf
from tests.integration.cards.conftest import ALPHA_CORE, C2, Indexed


def by_name(cards: list[Card]) -> dict[str, Card]:
    return {c.name: c for c in cards}


@pytest.fixture
def built(indexed: Indexed, service: CardService) -> dict[str, Card]:
    return by_name(service.build(indexed.repo, git=Git(indexed.git.path)))


class TestCompiled:
    """One card per package, every section from the graph as of the commit."""

    def test_sections(self, indexed: Indexed, built: dict[str, Card]) -> None:
        assert sorted(built) == ["alpha", "beta"]
        alpha, beta = built["alpha"], built["beta"]
        assert alpha.commit == indexed.shas[0]
        assert Claim("called_by", "alpha", "beta", "imports 1, calls 1") in alpha.claims
        assert Claim("depends_on", "beta", "alpha", "imports 1, calls 1") in beta.claims
        assert Claim("api", "alpha", "alpha/alpha/core.py:helper", "function") in alpha.claims
        assert not any("_private" in c.object for c in alpha.claims if c.kind == "api")
        assert (
            Claim("requirement", "alpha", "REQ-1", "IMPLEMENTED_BY alpha/alpha/core.py:helper")
            in alpha.claims
        )
        assert Claim("entrypoint", "beta", "beta/beta/service.py:main", "cli main") in beta.claims
        assert Claim("test", "beta", "beta/tests/test_service.py:test_serve") in beta.claims
        assert "- @math-team" in alpha.markdown
        assert "- @everyone" in beta.markdown
        assert f"claims: {len(alpha.claims)}" in alpha.markdown
        # the markdown says exactly what the recorded claims say
        assert sorted(parse_card(alpha.markdown).claims) == sorted(alpha.claims)

    def test_stored_and_exported(
        self, indexed: Indexed, service: CardService, built: dict[str, Card], tmp_path: Path
    ) -> None:
        stored = by_name(service.cards(indexed.repo))
        assert {n: c.markdown for n, c in stored.items()} == {
            n: c.markdown for n, c in built.items()
        }
        assert stored["alpha"].sources == built["alpha"].sources
        assert sorted(stored["beta"].claims) == sorted(built["beta"].claims)
        # as of before the commit there were no cards
        assert service.store.read(indexed.repo, AsOf.at(C2.replace(year=2024))) == []
        written = export_cards(list(stored.values()), tmp_path / "out")
        assert sorted(p.name for p in written) == ["alpha.md", "beta.md", "index.md"]
        assert "[alpha](alpha.md)" in (tmp_path / "out" / "index.md").read_text()


class TestGate:
    """True cards pass; every invented structural claim is caught and listed."""

    def test_true_cards_pass(
        self, indexed: Indexed, service: CardService, built: dict[str, Card]
    ) -> None:
        checks = service.check(indexed.repo)
        assert [(c.card.name, c.gate.ok, c.staleness.stale) for c in checks] == [
            ("alpha", True, False),
            ("beta", True, False),
        ]
        assert all(c.gate.checked == len(c.card.claims) for c in checks)

    CORRUPTIONS: ClassVar[list[tuple[str, str, str, tuple[str, str]]]] = [
        # (card, replace, with, the claim the gate must name)
        (
            "beta",
            "- `alpha`: imports 1, calls 1",
            "- `alpha`: imports 1, calls 1\n- `gamma`: imports 1, calls 0",
            ("depends_on", "gamma"),
        ),
        (
            "beta",
            "- `alpha`: imports 1, calls 1",
            "- `alpha`: imports 3, calls 1",
            ("depends_on", "alpha"),
        ),
        (
            "alpha",
            "## Used by\n\n- `beta`: imports 1, calls 1",
            "## Used by\n\n- `alpha`: imports 1, calls 1",
            ("called_by", "alpha"),
        ),
        (
            "beta",
            "## Used by\n\n(none)",
            "## Used by\n\n- `alpha`: imports 1, calls 0",
            ("called_by", "alpha"),
        ),
        (
            "beta",
            "- `beta/tests/test_service.py:test_serve`",
            "- `beta/tests/test_service.py:test_gone`",
            ("test", "beta/tests/test_service.py:test_gone"),
        ),
        (
            "beta",
            "- `beta/beta/service.py:main`: cli main",
            "- `beta/beta/service.py:serve`: cli serve",
            ("entrypoint", "beta/beta/service.py:serve"),
        ),
        (
            "alpha",
            "IMPLEMENTED_BY `alpha/alpha/core.py:helper`",
            "IMPLEMENTED_BY `alpha/alpha/core.py:Store`",
            ("requirement", "REQ-1"),
        ),
        (
            "alpha",
            "- `alpha/alpha/core.py:helper` (function)",
            "- `alpha/alpha/core.py:helper` (class)",
            ("api", "alpha/alpha/core.py:helper"),
        ),
        (
            "alpha",
            "- `alpha/alpha/core.py`\n\n## Recent",
            "- `alpha/alpha/core.py`\n- `alpha/alpha/vanished.py`\n\n## Recent",
            ("file", "alpha/alpha/vanished.py"),
        ),
        (
            "alpha",
            "# alpha\n",
            "# alpha\n\nThis package depends on beta.\n",
            ("depends_on", "beta"),
        ),
        (
            "beta",
            "# beta\n",
            "# beta\n\nIts entry calls `fetch_remote` first.\n",
            ("calls", "fetch_remote"),
        ),
        (
            "beta",
            "# beta\n",
            "# beta\n\nSee `Scheduler` for the loop.\n",
            ("mentions", "Scheduler"),
        ),
        (
            "alpha",
            "- `alpha/alpha/core.py:helper`: Double a number.",
            "- `alpha/alpha/core.py:helper`: Triple a number.",
            ("doc", "alpha/alpha/core.py:helper"),
        ),
    ]

    def test_corrupted_cards_fail(
        self, indexed: Indexed, gateway: Gateway, built: dict[str, Card]
    ) -> None:
        snap = load_snapshot(gateway, indexed.repo, "main", indexed.shas[0])
        caught = 0
        for name, old, new, (kind, obj) in self.CORRUPTIONS:
            text = built[name].markdown
            assert old in text, old
            corrupted = text.replace(old, new, 1)
            result = check_card(corrupted, snap)
            assert not result.ok, (name, new)
            named = [(c.kind, c.object) for c, _ in result.unsupported]
            assert (kind, obj) in named, (named, new)
            caught += 1
        assert caught == len(self.CORRUPTIONS)
        # the untouched texts and the recorded claims pass the same gate
        for card in built.values():
            assert check_card(card.markdown, snap).ok
            assert check_card(card.claims, snap).ok
            assert check_card(card, snap).ok

    def test_text_and_recorded_claims_must_agree(
        self, indexed: Indexed, gateway: Gateway, built: dict[str, Card]
    ) -> None:
        snap = load_snapshot(gateway, indexed.repo, "main", indexed.shas[0])
        card = built["beta"]
        edited = card.markdown.replace("- `beta/tests/test_service.py:test_serve`\n", "")
        forged = Card(
            **{**{f: getattr(card, f) for f in card.__dataclass_fields__}, "markdown": edited}
        )
        result = check_card(forged, snap)
        assert [why for _, why in result.unsupported] == ["claim recorded but not in the text"]
        assert not check_card(edited, snap).ok  # the frontmatter's claim count no longer fits


class TestStale:
    """A push that changes one package makes only its card stale; the old card stays true
    at its own commit, and the vanished test is caught when checked against the new head."""

    def test_only_the_changed_package(
        self,
        indexed: Indexed,
        indexer: CodeIndexer,
        service: CardService,
        gateway: Gateway,
        built: dict[str, Card],
    ) -> None:
        repo = indexed.git
        repo.write("alpha/alpha/core.py", ALPHA_CORE.replace("x * 2", "x + x"))
        sha = repo.commit("alpha body", C2)
        indexer.index(Git(repo.path), indexed.repo, "main", sha)
        stale = service.stale(indexed.repo)
        assert [(c.name, s.changed, s.added, s.removed) for c, s in stale] == [
            ("alpha", ("file:alpha/alpha/core.py",), (), ())
        ]
        checks = {c.card.name: c for c in service.check(indexed.repo)}
        assert checks["alpha"].gate.ok
        assert checks["alpha"].staleness.stale
        assert checks["beta"].ok
        rebuilt = service.build(indexed.repo, packages={"alpha"})
        assert [c.name for c in rebuilt] == ["alpha"]
        assert rebuilt[0].commit == sha
        assert service.stale(indexed.repo) == []
        # the first card is still readable, and true, as of its own commit
        old = by_name(service.store.read(indexed.repo, AsOf.at(C2.replace(day=1, month=5))))
        assert old["alpha"].commit == indexed.shas[0]

    def test_vanished_test(
        self, indexed: Indexed, indexer: CodeIndexer, gateway: Gateway, built: dict[str, Card]
    ) -> None:
        repo = indexed.git
        repo.delete("beta/tests/test_service.py")
        sha = repo.commit("drop the test", C2)
        indexer.index(Git(repo.path), indexed.repo, "main", sha)
        head = load_snapshot(gateway, indexed.repo)
        result = check_card(built["beta"].markdown, head)
        assert {(c.kind, c.object) for c, _ in result.unsupported} >= {
            ("test", "beta/tests/test_service.py:test_serve"),
            ("file", "beta/tests/test_service.py"),
        }
        then = load_snapshot(gateway, indexed.repo, "main", indexed.shas[0])
        assert check_card(built["beta"].markdown, then).ok

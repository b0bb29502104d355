"""A path map (.strata/packages.yml) overrides the detected package boundaries of cards; owners
come from CODEOWNERS or the map; the gate, staleness and lint apply the map without a clone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from strata.cards import CardService, check_card
from strata.cards.lint import lint_repository
from strata.cards.pipeline import CardPipeline
from strata.code.indexer import CodeIndexer
from strata.errors import ValidationError
from strata.git import Git
from strata.ontology import Ontology
from tests.integration.cards.conftest import Indexed, push

C3 = datetime(2025, 7, 1, tzinfo=UTC)

MAP = """\
packages:
  - path: beta/tests
    name: beta-tests
    owners: ["@qa"]
"""


class TestPathMap:
    """Mapped folders become packages; the deepest package holding a file owns it."""

    def test_a_mapped_folder_is_its_own_card(
        self, indexed: Indexed, indexer: CodeIndexer, service: CardService, ontology: Ontology
    ) -> None:
        indexed.git.write(".strata/packages.yml", MAP)
        push(indexed, indexer, "path map", datetime(2025, 5, 2, tzinfo=UTC))
        git = Git(indexed.git.path)
        cards = {c.name: c for c in service.build(indexed.repo, git=git)}
        assert sorted(cards) == ["alpha", "beta", "beta-tests"]
        tests = cards["beta-tests"]
        assert tests.package == "beta/tests"
        assert "## Files\n\n- `beta/tests/test_service.py`\n" in tests.markdown
        assert "## Tests\n\n- `beta/tests/test_service.py:test_serve`" in tests.markdown
        assert "## Depends on\n\n- `beta`: imports 1, calls 1" in tests.markdown
        assert "## Owners\n\n- @qa\n" in tests.markdown  # the map's owners win
        assert "## Owners\n\n- @math-team\n" in cards["alpha"].markdown  # CODEOWNERS
        assert "## Owners\n\n- @everyone\n" in cards["beta"].markdown
        assert "test_service.py" not in cards["beta"].markdown
        assert "## Used by\n\n- `beta-tests`: imports 1, calls 1" in cards["beta"].markdown
        assert "boundaries:" in tests.markdown
        # no clone needed to check them: each card carries the map it was compiled under
        checks = {c.card.name: c for c in service.check(indexed.repo)}
        assert all(c.ok for c in checks.values()), {
            n: (c.gate.unsupported, c.staleness) for n, c in checks.items()
        }
        assert [c.name for c, s in service.with_staleness(indexed.repo) if s.stale] == []
        assert lint_repository(service.gateway, ontology, indexed.repo).ok
        # a build without a clone keeps the map the stored cards were compiled under
        rebuilt = service.build(indexed.repo)
        assert sorted(c.name for c in rebuilt) == ["alpha", "beta", "beta-tests"]
        assert [c.fingerprint for c in rebuilt] == [cards[c.name].fingerprint for c in rebuilt]

    def test_replace_keeps_only_the_mapped_packages(
        self, indexed: Indexed, indexer: CodeIndexer, service: CardService
    ) -> None:
        indexed.git.write(".strata/packages.yml", "replace: true\npackages:\n  - alpha/alpha\n")
        push(indexed, indexer, "replace", datetime(2025, 5, 2, tzinfo=UTC))
        cards = {c.package: c for c in service.build(indexed.repo, git=Git(indexed.git.path))}
        assert sorted(cards) == [".", "alpha/alpha"]
        assert cards["alpha/alpha"].name == "alpha/alpha"
        assert "`beta/beta/service.py`" in cards["."].markdown  # the rest: the root
        assert "## Used by\n\n- `" + cards["."].name + "`: imports 1, calls 1" in (
            cards["alpha/alpha"].markdown
        )
        snaps = service.snapshots(indexed.repo)
        assert all(check_card(c, snaps.of_card(c)).ok for c in cards.values())

    def test_changing_the_map_regroups_and_closes(
        self, indexed: Indexed, indexer: CodeIndexer, service: CardService
    ) -> None:
        indexed.git.write(".strata/packages.yml", MAP)
        push(indexed, indexer, "path map", datetime(2025, 5, 2, tzinfo=UTC))
        git = Git(indexed.git.path)
        CardPipeline(service).run(indexed.repo, git=git)
        indexed.git.write(".strata/packages.yml", "packages: []\n")
        push(indexed, indexer, "no map", C3)
        result = CardPipeline(service).run(indexed.repo, git=git)
        assert sorted(c.name for c in result.rebuilt) == ["alpha", "beta"]  # the map changed
        assert [c.name for c in result.closed] == ["beta-tests"]
        assert sorted(c.name for c in service.cards(indexed.repo)) == ["alpha", "beta"]

    def test_a_malformed_map_is_a_clear_error_and_writes_nothing(
        self, indexed: Indexed, indexer: CodeIndexer, service: CardService
    ) -> None:
        indexed.git.write(".strata/packages.yml", "packages:\n  - path: ../outside\n")
        push(indexed, indexer, "bad map", datetime(2025, 5, 2, tzinfo=UTC))
        with pytest.raises(ValidationError, match="not a folder inside the repository"):
            CardPipeline(service).run(indexed.repo, git=Git(indexed.git.path))
        assert service.cards(indexed.repo) == []

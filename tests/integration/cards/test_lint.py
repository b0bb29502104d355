"""`strata lint` against the real Neo4j: each rule fires on what it names, and only then."""

from __future__ import annotations

import json

import pytest

from strata.cards import CardService
from strata.cards.lint import lint_repository, negation_key
from strata.code.indexer import CodeIndexer
from strata.errors import NotFound
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.store import FactStore
from strata.ontology import Ontology
from strata.settings import Settings
from strata.writers import KnowledgeWriter
from tests.integration.api.conftest import Api, api, make_api
from tests.integration.cards.conftest import C1, C2, Indexed
from tests.integration.code.cli import cli

__all__ = ["api", "make_api"]

WITHOUT_HELPER = '''\
"""Core arithmetic of alpha."""


class Store:
    """Keeps values."""

    def get(self, key):
        return key
'''


def requirement(gateway: Gateway, ontology: Ontology, repo: str, req_id: str, text: str) -> None:
    writer = KnowledgeWriter(FactStore(gateway, ontology))
    writer.write(
        [
            writer.assert_state(
                "Requirement",
                {"repo": repo, "req_id": req_id},
                {"text": text, "ears": "ubiquitous", "path": "docs/req.md", "line": 3},
                valid_at=C1,
            )
        ]
    )


def rules(report: object) -> list[tuple[str, str]]:
    return sorted((f.rule, f.subject) for f in report.findings)  # type: ignore[attr-defined]


class TestLint:
    """A fresh repository lints clean; each later change shows up under its rule."""

    def test_clean_then_every_rule(
        self,
        indexed: Indexed,
        service: CardService,
        indexer: CodeIndexer,
        gateway: Gateway,
        ontology: Ontology,
    ) -> None:
        service.build(indexed.repo)
        clean = lint_repository(gateway, ontology, indexed.repo)
        assert clean.ok
        assert clean.findings == []
        assert clean.checked["cards"] == 2
        assert clean.checked["requirements"] == 1
        requirement(
            gateway, ontology, indexed.repo, "REQ-2", "The system shall not double numbers."
        )
        indexed.git.write("alpha/alpha/core.py", WITHOUT_HELPER)
        sha = indexed.git.commit("helper goes", C2)
        indexer.index(Git(indexed.git.path), indexed.repo, "main", sha)
        report = lint_repository(gateway, ontology, indexed.repo)
        assert not report.ok
        found = rules(report)
        assert ("contradiction", "REQ-1") in found
        assert ("unlinked_requirement", "REQ-2") in found
        assert ("vanished_link", "REQ-1") in found
        assert ("stale_card", "alpha") in found
        assert ("stale_claim", "alpha") in found
        assert ("unlinked_requirement", "REQ-1") not in found  # its link is still current
        stale_claims = [f.message for f in report.findings if f.rule == "stale_claim"]
        assert any("alpha/alpha/core.py:helper" in m for m in stale_claims)
        assert report.counts()["contradiction"] == 1
        assert report.counts()["needs_review"] == 0
        assert report.commit == sha
        document = report.to_json()
        assert document["metrics"]["errors"] == sum(
            1 for f in report.findings if f.severity == "error"
        )
        assert "| contradiction | error | 1 |" in report.markdown()

    def test_nothing_to_lint(self, gateway: Gateway, ontology: Ontology, unique: str) -> None:
        with pytest.raises(NotFound):
            lint_repository(gateway, ontology, f"nothing-{unique}")


def test_negation_key() -> None:
    assert negation_key("The API shall not log secrets.") == ("the api shall log secrets", True)
    assert negation_key("The API shall log secrets") == ("the api shall log secrets", False)
    assert negation_key("no modal verb here") is None


def test_cli_and_graphql(
    indexed: Indexed,
    service: CardService,
    settings: Settings,
    gateway: Gateway,
    ontology: Ontology,
    api: Api,
) -> None:
    service.build(indexed.repo)
    ok = cli(settings, "lint", "--repo", indexed.repo)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"# Lint of {indexed.repo}/main at `{indexed.shas[0][:12]}`: ok" in ok.stdout
    requirement(gateway, ontology, indexed.repo, "REQ-9", "The system shall not double numbers.")
    failed = cli(settings, "lint", "--repo", indexed.repo, "--format", "json")
    assert failed.returncode == 1
    document = json.loads(failed.stdout)
    assert document["metrics"]["by_rule"]["contradiction"] == 1
    assert {k: v for k, v in document["findings"][0].items() if k != "message"} == {
        "rule": "contradiction",
        "severity": "error",
        "subject": "REQ-1",
    }
    query = """query($repo: String!) { lint(repository: $repo) {
        ok counts { rule count } findings { rule severity subject } } }"""
    body = api.gql(query, api.key("read", indexed.repo), {"repo": indexed.repo}).json()
    assert "errors" not in body, body
    lint = body["data"]["lint"]
    assert lint["ok"] is False
    assert {"rule": "unlinked_requirement", "severity": "warning", "subject": "REQ-9"} in lint[
        "findings"
    ]
    assert {"rule": "contradiction", "count": 1} in lint["counts"]
    outsider = api.key("read", f"other-{indexed.repo}")
    assert api.gql(query, outsider, {"repo": indexed.repo}).json()["data"]["lint"] is None

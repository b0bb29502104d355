"""A two-package repository indexed into the real Neo4j, with a requirement linked in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata.cards import CardService
from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.facts import EdgeFact, Source
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology, load_ontology
from strata.settings import Settings
from strata.writers import KnowledgeWriter, TraceWriter
from tests.gitrepo import GitRepo

C1 = datetime(2025, 5, 1, tzinfo=UTC)
C2 = datetime(2025, 6, 1, tzinfo=UTC)

ALPHA_CORE = '''\
"""Core arithmetic of alpha."""


def helper(x):
    """Double a number."""
    return x * 2


class Store:
    """Keeps values."""

    def get(self, key):
        return key


def _private():
    return 0
'''

BETA_SERVICE = '''\
import click

from alpha.core import helper


def serve(n):
    """Serve doubled numbers."""
    return helper(n) + helper(1)


@click.command()
def main():
    """Run the beta service."""
    print(serve(2))
'''

BETA_TEST = """\
from beta.service import serve


def test_serve():
    assert serve(1) == 4
"""


def two_packages(repo: GitRepo) -> GitRepo:
    """alpha (core arithmetic) and beta (a service importing and calling alpha, a test)."""
    repo.write("alpha/pyproject.toml", '[project]\nname = "alpha"\n')
    repo.write("alpha/alpha/__init__.py", "")
    repo.write("alpha/alpha/core.py", ALPHA_CORE)
    repo.write("beta/pyproject.toml", '[project]\nname = "beta"\n')
    repo.write("beta/beta/__init__.py", "")
    repo.write("beta/beta/service.py", BETA_SERVICE)
    repo.write("beta/tests/test_service.py", BETA_TEST)
    return repo


@dataclass
class Indexed:
    repo: str
    git: GitRepo
    shas: list[str]


@pytest.fixture(scope="session")
def ontology(settings: Settings) -> Ontology:
    return load_ontology(settings.ontology_dir)


@pytest.fixture
def indexer(gateway: Gateway, ontology: Ontology, tmp_path: Path) -> CodeIndexer:
    return CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(tmp_path / "cache"),
        max_file_bytes=20_000,
    )


@pytest.fixture
def service(gateway: Gateway, ontology: Ontology) -> CardService:
    return CardService(gateway, ontology)


def link_requirement(gateway: Gateway, ontology: Ontology, repo: str, sha: str) -> None:
    """REQ-1 in the knowledge layer, IMPLEMENTED_BY alpha's helper in the trace layer."""
    store = FactStore(gateway, ontology)
    knowledge = KnowledgeWriter(store)
    knowledge.write(
        [
            knowledge.assert_state(
                "Requirement",
                {"repo": repo, "req_id": "REQ-1"},
                {
                    "text": "The system shall double numbers.",
                    "ears": "ubiquitous",
                    "path": "docs/req.md",
                    "line": 1,
                },
                valid_at=C1,
            )
        ]
    )
    trace = TraceWriter(store)
    target = trace.ref(
        "Symbol",
        repo=repo,
        ref="main",
        path="alpha/alpha/core.py",
        qualname="helper",
        name="helper",
    )
    req = trace.ref("Requirement", repo=repo, req_id="REQ-1")
    trace.write(
        [
            EdgeFact(
                "IMPLEMENTED_BY",
                req,
                target,
                repo,
                {"status": "VALIDATED", "confidence": 1.0, "methods": ["declared"], "commit": sha},
                C1,
                source=Source(commit=sha),
            )
        ]
    )


def push(indexed: Indexed, indexer: CodeIndexer, message: str, when: datetime) -> str:
    """Commit what the test wrote into the indexed repository and index that commit."""
    sha = indexed.git.commit(message, when)
    indexer.index(Git(indexed.git.path), indexed.repo, "main", sha)
    indexed.shas.append(sha)
    return sha


@pytest.fixture
def indexed(
    tmp_path: Path, indexer: CodeIndexer, gateway: Gateway, ontology: Ontology, unique: str
) -> Indexed:
    repo = two_packages(GitRepo(tmp_path / "two"))
    repo.write(".github/CODEOWNERS", "* @everyone\n/alpha/ @math-team\n")
    sha = repo.commit("first", C1)
    name = f"cards-{unique}"
    indexer.index(Git(repo.path), name, "main", sha)
    link_requirement(gateway, ontology, name, sha)
    return Indexed(name, repo, [sha])

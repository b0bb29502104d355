"""Fixtures for indexing real git repositories into the real Neo4j."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.code.reads import CodeReads
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology, load_ontology
from strata.settings import Settings


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
def code_reads(gateway: Gateway, ontology: Ontology) -> CodeReads:
    return CodeReads(gateway, ontology)

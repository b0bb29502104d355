"""Layer writers on the real Neo4j: the one-writer rule, and the ontology version facts carry."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from strata.errors import OntologyViolation
from strata.facts import EdgeFact, Fact, NodeRef
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import load_ontology
from strata.settings import Settings
from strata.writers import CodeWriter, TraceWriter
from tests.integration.test_store import count_repo, identity, state

T0 = datetime(2025, 3, 1, tzinfo=UTC)
LINK = {"status": "PROPOSED", "confidence": 0.5, "methods": ["test"], "commit": "a" * 40}


@pytest.fixture
def store(gateway: Gateway, settings: Settings) -> FactStore:
    return FactStore(gateway, load_ontology(settings.ontology_dir))


def trace_edge(repo: str, writer: CodeWriter) -> EdgeFact:
    symbol = writer.ref("Symbol", **identity(repo, "f"))
    return EdgeFact(
        "IMPLEMENTED_BY", NodeRef("Requirement", f"{repo}|REQ-001"), symbol, repo, LINK, T0
    )


class TestOneWriterRule:
    """A writer given another layer's label or edge type raises and the graph is untouched."""

    def test_code_writer_refuses_a_trace_edge(
        self, store: FactStore, gateway: Gateway, unique: str
    ) -> None:
        repo = f"w1-{unique}"
        writer = CodeWriter(store)
        good = writer.assert_state("Symbol", identity(repo, "f"), state(), valid_at=T0)
        with pytest.raises(OntologyViolation, match="the code writer may not write it"):
            writer.write([good, trace_edge(repo, writer)])
        assert count_repo(gateway, repo) == (0, 0)

    def test_write_many_refuses_before_the_first_batch(
        self, store: FactStore, gateway: Gateway, unique: str
    ) -> None:
        repo = f"w2-{unique}"
        writer = CodeWriter(store)
        good: list[Fact] = [
            writer.assert_state("Symbol", identity(repo, f"f{i}"), state(), valid_at=T0)
            for i in range(6)
        ]
        batches = [good[:3], good[3:], [trace_edge(repo, writer)]]
        with pytest.raises(OntologyViolation, match="belongs to the trace layer"):
            writer.write_many(batches, workers=2)
        assert count_repo(gateway, repo) == (0, 0)

    def test_trace_writer_refuses_a_code_label_in_write_many(
        self, store: FactStore, gateway: Gateway, unique: str
    ) -> None:
        repo = f"w3-{unique}"
        code = CodeWriter(store)
        symbol = code.assert_state("Symbol", identity(repo, "f"), state(), valid_at=T0)
        with pytest.raises(OntologyViolation, match="the trace writer may not write it"):
            TraceWriter(store).write_many([[symbol]])
        assert count_repo(gateway, repo) == (0, 0)

    def test_write_many_writes_every_batch(
        self, store: FactStore, gateway: Gateway, unique: str
    ) -> None:
        repo = f"w4-{unique}"
        writer = CodeWriter(store)
        facts: list[Fact] = [
            writer.assert_state("Symbol", identity(repo, f"f{i}"), state(), valid_at=T0)
            for i in range(7)
        ]
        seen: list[int] = []
        result = writer.write_many(
            (facts[i : i + 2] for i in range(0, 7, 2)),
            workers=2,
            on_done=lambda r: seen.append(r.facts),
        )
        assert (result.facts, result.created) == (7, 7)
        assert sorted(seen) == [1, 2, 2, 2]
        assert count_repo(gateway, repo) == (7, 7)


class TestOntologyVersions:
    """Facts record the ontology version they were written under; reads do not filter on it."""

    def test_facts_of_an_older_version_stay_readable(
        self, store: FactStore, gateway: Gateway, unique: str
    ) -> None:
        repo = f"w5-{unique}"
        current = store.ontology
        older = FactStore(gateway, replace(current, version=current.version - 1))
        for writing, name in ((older, "old"), (store, "new")):
            writer = CodeWriter(writing)
            writer.write(
                [writer.assert_state("Symbol", identity(repo, name), state(), valid_at=T0)]
            )
        reads = Reads(gateway, current)
        versions = {
            name: reads.node_current(
                "Symbol", CodeWriter(store).ref("Symbol", **identity(repo, name)).key
            )
            for name in ("old", "new")
        }
        assert {
            name: found.state.props["ontology"] for name, found in versions.items() if found
        } == {"old": current.version - 1, "new": current.version}

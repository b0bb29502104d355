"""The fact store on the real Neo4j: refusals write nothing, writes are idempotent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from strata.errors import OntologyViolation, TemporalError
from strata.facts import EdgeFact, NodeRef, StateFact
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology, load_ontology
from strata.ontology.schema import constraint_name, key_property
from strata.settings import Settings
from strata.temporal import AsOf
from strata.writers import CodeWriter, TraceWriter

T0 = datetime(2025, 3, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def ontology(settings: Settings) -> Ontology:
    # Version 3: the Symbol states below carry the span it requires (v4 keeps spans on the
    # File's layout, so it no longer requires them); the store's rules are the same.
    return load_ontology(settings.ontology_dir, 3)


@pytest.fixture
def store(gateway: Gateway, ontology: Ontology) -> FactStore:
    return FactStore(gateway, ontology)


@pytest.fixture
def reads(gateway: Gateway, ontology: Ontology) -> Reads:
    return Reads(gateway, ontology)


def identity(repo: str, name: str, path: str = "m.py") -> dict[str, Any]:
    return {"repo": repo, "ref": "main", "path": path, "qualname": name, "name": name}


def state(body: str = "h1", **extra: Any) -> dict[str, Any]:
    props: dict[str, Any] = {
        "kind": "function",
        "qualified_name": "m.f",
        "line_start": 1,
        "line_end": 2,
        "body_hash": body,
        "language": "python",
    }
    props.update(extra)
    return props


def count_repo(gateway: Gateway, repo: str) -> tuple[int, int]:
    """Nodes and relationships of one repository (tests isolate by repo)."""
    rows = gateway.read(
        "MATCH (n {repo: $repo}) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS nodes, "
        "count(r) AS rels",
        repo=repo,
    )
    return int(rows[0]["nodes"]), int(rows[0]["rels"])


def graph_snapshot(gateway: Gateway, repo: str) -> list[tuple[Any, ...]]:
    rows = gateway.read(
        "MATCH (a {repo: $repo})-[r]->(b) RETURN a.key AS a, type(r) AS t, b.key AS b, "
        "properties(r) AS p",
        repo=repo,
    )
    return sorted(
        (row["a"], row["t"], row["b"], tuple(sorted((k, str(v)) for k, v in row["p"].items())))
        for row in rows
    )


class TestRefusals:
    """An invalid record refuses the whole batch, and the graph is left untouched."""

    @pytest.mark.parametrize(
        ("bad", "rule"),
        [
            ("unknown_label", "unknown label 'Widget'"),
            ("unknown_edge", "unknown edge type 'TOUCHES'"),
            ("bad_endpoints", "INHERITS may not end at File"),
            ("missing_required", "missing required property 'line_end'"),
            ("mistyped", "property 'line_start': expected int"),
            ("bad_enum", "'sideways' is not one of"),
            ("other_layer", "belongs to the trace layer"),
        ],
    )
    def test_bad_record_writes_nothing(
        self, store: FactStore, gateway: Gateway, unique: str, bad: str, rule: str
    ) -> None:
        repo = f"refuse-{unique}"
        writer = CodeWriter(store)
        good = writer.assert_state("Symbol", identity(repo, "f"), state(), valid_at=T0)
        f_ref = writer.ref("Symbol", **identity(repo, "f"))
        file_ref = writer.ref("File", repo=repo, ref="main", path="m.py")
        link_props = {"status": "PROPOSED", "confidence": 0.5, "methods": ["m"], "commit": "c"}
        bad_facts: dict[str, Any] = {
            "unknown_label": StateFact("Widget", {"repo": repo}, {}, T0),
            "unknown_edge": EdgeFact("TOUCHES", f_ref, f_ref, repo, {}, T0),
            "bad_endpoints": EdgeFact("INHERITS", f_ref, file_ref, repo, {}, T0),
            "missing_required": StateFact(
                "Symbol",
                identity(repo, "g"),
                {k: v for k, v in state().items() if k != "line_end"},
                T0,
            ),
            "mistyped": StateFact("Symbol", identity(repo, "g"), state(line_start="one"), T0),
            "bad_enum": EdgeFact(
                "CALLS",
                f_ref,
                f_ref,
                repo,
                {"line": 1, "confidence": 1.0, "resolution": "sideways"},
                T0,
            ),
            "other_layer": EdgeFact(
                "VERIFIED_BY",
                NodeRef("Requirement", f"{repo}|REQ-001"),
                f_ref,
                repo,
                link_props,
                T0,
            ),
        }
        with pytest.raises(OntologyViolation, match="nothing was written") as caught:
            writer.write([good, bad_facts[bad]])
        assert rule in str(caught.value)
        assert count_repo(gateway, repo) == (0, 0)

    def test_missing_endpoint_rolls_back_the_batch(
        self, store: FactStore, gateway: Gateway, unique: str
    ) -> None:
        repo = f"endpoint-{unique}"
        writer = CodeWriter(store)
        f_ref = writer.ref("Symbol", **identity(repo, "f"))
        ghost = writer.ref("Symbol", **identity(repo, "ghost"))
        facts = [
            writer.assert_state("Symbol", identity(repo, "f"), state(), valid_at=T0),
            writer.assert_edge(
                "CALLS",
                f_ref,
                ghost,
                {"line": 3, "confidence": 1.0, "resolution": "local"},
                repo=repo,
                valid_at=T0,
            ),
        ]
        with pytest.raises(OntologyViolation, match="edge endpoints do not exist"):
            writer.write(facts)
        assert count_repo(gateway, repo) == (0, 0)

    def test_trace_writer_cannot_write_code(self, store: FactStore, unique: str) -> None:
        writer = TraceWriter(store)
        fact = writer.assert_state("Symbol", identity(f"t-{unique}", "f"), state(), valid_at=T0)
        with pytest.raises(OntologyViolation, match="the trace writer may not write it"):
            writer.write([fact])

    def test_naive_time_is_refused(self, store: FactStore, gateway: Gateway, unique: str) -> None:
        repo = f"naive-{unique}"
        writer = CodeWriter(store)
        fact = StateFact("Symbol", identity(repo, "f"), state(), datetime(2025, 1, 1))  # noqa: DTZ001
        with pytest.raises(OntologyViolation, match="naive datetime"):
            writer.write([fact])
        assert count_repo(gateway, repo) == (0, 0)

    def test_backwards_transaction_time_is_refused(
        self, store: FactStore, gateway: Gateway, unique: str
    ) -> None:
        repo = f"backwards-{unique}"
        writer = CodeWriter(store)
        tx = datetime(2026, 5, 1, tzinfo=UTC)
        writer.write(
            [writer.assert_state("Symbol", identity(repo, "f"), state(), valid_at=T0)], tx_time=tx
        )
        before = graph_snapshot(gateway, repo)
        with pytest.raises(TemporalError, match="must not go backwards"):
            writer.write(
                [writer.assert_state("Symbol", identity(repo, "f"), state("h2"), valid_at=T0)],
                tx_time=tx - timedelta(days=1),
            )
        assert graph_snapshot(gateway, repo) == before


class TestIdempotence:
    """Writing the same batch twice leaves the same graph."""

    def test_same_batch_twice(self, store: FactStore, gateway: Gateway, unique: str) -> None:
        repo = f"idem-{unique}"
        writer = CodeWriter(store)
        f_ref = writer.ref("Symbol", **identity(repo, "f"))
        g_ref = writer.ref("Symbol", **identity(repo, "g"))
        batch = [
            writer.assert_state("Symbol", identity(repo, "f"), state("hf"), valid_at=T0),
            writer.assert_state("Symbol", identity(repo, "g"), state("hg"), valid_at=T0),
            writer.assert_edge(
                "CALLS",
                f_ref,
                g_ref,
                {"line": 2, "confidence": 1.0, "resolution": "local"},
                repo=repo,
                valid_at=T0,
            ),
        ]
        first = writer.write(batch)
        snapshot = graph_snapshot(gateway, repo)
        second = writer.write(batch)
        assert (first.created, second.created, second.expired, second.unchanged) == (3, 0, 0, 3)
        assert graph_snapshot(gateway, repo) == snapshot

    def test_later_identical_assert_keeps_the_original_valid_time(
        self, store: FactStore, reads: Reads, unique: str
    ) -> None:
        repo = f"idem2-{unique}"
        writer = CodeWriter(store)
        writer.write([writer.assert_state("Symbol", identity(repo, "f"), state(), valid_at=T0)])
        later = T0 + timedelta(days=9)
        result = writer.write(
            [writer.assert_state("Symbol", identity(repo, "f"), state(), valid_at=later)]
        )
        assert result.unchanged == 1
        key = writer.ref("Symbol", **identity(repo, "f")).key
        assert [v.valid_at for v in reads.state_history("Symbol", key)] == [T0]


class TestReads:
    """history and changes report every version with its four times and source."""

    def test_history_and_changes(self, store: FactStore, reads: Reads, unique: str) -> None:
        repo = f"hist-{unique}"
        writer = CodeWriter(store)
        ident = identity(repo, "f")
        key = writer.ref("Symbol", **ident).key
        tx1 = datetime(2026, 2, 1, tzinfo=UTC)
        tx2 = tx1 + timedelta(hours=1)
        writer.write([writer.assert_state("Symbol", ident, state("h1"), valid_at=T0)], tx_time=tx1)
        writer.write(
            [writer.assert_state("Symbol", ident, state("h2"), valid_at=T0 + timedelta(days=2))],
            tx_time=tx2,
        )
        history = reads.state_history("Symbol", key)
        assert [
            (
                v.props["body_hash"],
                v.valid_at,
                v.invalid_at,
                v.created_at,
                v.expired_at,
                v.invalidated_at,
            )
            for v in history
        ] == [
            ("h1", T0, T0 + timedelta(days=2), tx1, None, tx2),
            ("h2", T0 + timedelta(days=2), None, tx2, None, None),
        ]
        assert all(v.props["ontology"] == store.ontology.version for v in history)

        old = reads.node_state("Symbol", key, AsOf.at(T0 + timedelta(days=5), tx1))
        assert old is not None
        assert old.state.props["body_hash"] == "h1"
        assert reads.node_state("Symbol", key, AsOf.at(T0 - timedelta(days=1))) is None

        valid_changes = reads.changes(repo, T0 + timedelta(days=1), T0 + timedelta(days=3))
        assert [(c.change, c.version.props["body_hash"]) for c in valid_changes] == [
            ("closed", "h1"),
            ("opened", "h2"),
        ]
        known_changes = reads.changes(repo, tx2, tx2 + timedelta(seconds=1), axis="known")
        assert [(c.change, c.version.props["body_hash"]) for c in known_changes] == [
            ("closed", "h1"),
            ("opened", "h2"),
        ]
        # What Strata believed before tx2 is still readable: h1, open-ended.
        before = reads.node_state("Symbol", key, AsOf.at(T0 + timedelta(days=5), tx1))
        assert before is not None
        assert before.state.props["body_hash"] == "h1"


class TestSchema:
    """The migrated database holds a uniqueness constraint for every ontology key."""

    def test_every_key_has_a_constraint(self, gateway: Gateway, ontology: Ontology) -> None:
        rows = gateway.read(
            "SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties "
            "RETURN name, type, labelsOrTypes, properties"
        )
        found = {
            (row["labelsOrTypes"][0], tuple(row["properties"]))
            for row in rows
            if row["type"] == "UNIQUENESS"
        }
        missing = [
            label
            for label in ontology.nodes
            if (label, (key_property(ontology, label),)) not in found
        ]
        assert missing == [], f"ontology keys without a constraint: {missing}"
        names = {row["name"] for row in rows}
        assert constraint_name("Symbol") in names

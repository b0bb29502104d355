"""The ontology file loads into typed models and bad files are refused with every problem."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from strata.errors import OntologyViolation
from strata.facts import EdgeFact, NodeRef, StateFact, check_facts, check_layer
from strata.ontology import load_ontology
from strata.ontology.loader import (
    check_released,
    file_sha256,
    ontology_files,
    parse,
    released_versions,
)
from strata.ontology.schema import schema_statements
from strata.settings import PROJECT_ROOT

ONTOLOGY = load_ontology(PROJECT_ROOT / "ontology")
T = datetime(2026, 1, 1, tzinfo=UTC)


def symbol_state(**overrides: Any) -> StateFact:
    props: dict[str, Any] = {
        "kind": "function",
        "qualified_name": "m.f",
        "line_start": 1,
        "line_end": 2,
        "body_hash": "h",
        "language": "python",
    }
    props.update(overrides)
    identity = {"repo": "r", "ref": "main", "path": "m.py", "qualname": "f", "name": "f"}
    return StateFact("Symbol", identity, props, T)


def sym(name: str) -> NodeRef:
    return NodeRef("Symbol", f"r|main|m.py|{name}")


class TestLoad:
    """The shipped ontology is valid and complete for the three layers."""

    def test_shipped_ontology_loads(self) -> None:
        # The newest version is loaded; v1 (frozen) still loads as itself.
        assert ONTOLOGY.version == max(ontology_files(PROJECT_ROOT / "ontology"))
        assert load_ontology(PROJECT_ROOT / "ontology", 1).version == 1
        assert set(ONTOLOGY.layers) == {"code", "knowledge", "trace"}
        assert ONTOLOGY.node("Symbol").layer == "code"
        assert ONTOLOGY.edge("VERIFIED_BY").layer == "trace"
        status = ONTOLOGY.edge("IMPLEMENTED_BY").props.all["status"]
        assert status.enum == ("PROPOSED", "VALIDATED", "STALE")

    def test_every_key_gets_a_constraint_statement(self) -> None:
        text = "\n".join(schema_statements(ONTOLOGY))
        for label in ONTOLOGY.nodes:
            assert f"FOR (n:{label}) REQUIRE" in text

    def test_key_escapes_the_separator(self) -> None:
        node = ONTOLOGY.node("File")
        assert node.make_key({"repo": "a|b", "ref": "main", "path": "x%y"}) == "a%7Cb|main|x%25y"

    def test_bad_file_reports_every_problem(self, tmp_path: Path) -> None:
        raw = {
            "version": 1,
            "layers": ["code", "knowledge", "trace"],
            "nodes": {
                "bad_label": {"layer": "code", "identity": {"repo": "string"}, "key": ["repo"]},
                "Thing": {"layer": "nowhere", "identity": {"repo": "string"}, "key": ["id"]},
            },
            "edges": {"LINKS": {"layer": "code", "from": ["Ghost"], "to": ["Thing"]}},
        }
        with pytest.raises(OntologyViolation) as caught:
            parse(raw)
        text = str(caught.value)
        assert "PascalCase" in text
        assert "layer 'nowhere'" in text
        assert "key fields ['id']" in text
        assert "undeclared labels ['Ghost']" in text

    def test_version_must_match_file_name(self, tmp_path: Path) -> None:
        raw = yaml.safe_load((PROJECT_ROOT / "ontology" / "strata.v1.yaml").read_text())
        raw["version"] = 2
        (tmp_path / "strata.v1.yaml").write_text(yaml.safe_dump(raw))
        with pytest.raises(OntologyViolation, match="declares version 2"):
            load_ontology(tmp_path)


class TestCheckFacts:
    """Every write is checked against the ontology before it can reach the database."""

    def test_valid_symbol_passes(self) -> None:
        check_facts(ONTOLOGY, "code", [symbol_state()])

    @pytest.mark.parametrize(
        ("fact", "message"),
        [
            (StateFact("Ghost", {"repo": "r"}, {}, T), "unknown label 'Ghost'"),
            (symbol_state(kind="lambda"), "'lambda' is not one of"),
            (symbol_state(line_start="1"), "expected int"),
            (symbol_state(body_hash=None), "missing required property 'body_hash'"),
            (symbol_state(colour="red"), "unknown property 'colour'"),
            (EdgeFact("LINKS", sym("a"), sym("b"), "r", {}, T), "unknown edge type 'LINKS'"),
            (
                EdgeFact("IMPORTS", sym("a"), sym("b"), "r", {"line": 1}, T),
                "IMPORTS may not start at Symbol",
            ),
            (
                EdgeFact(
                    "CALLS",
                    sym("a"),
                    sym("b"),
                    "r",
                    {"line": 1, "confidence": 1.0, "resolution": "guess"},
                    T,
                ),
                "'guess' is not one of",
            ),
            (
                StateFact("Symbol", {"repo": "r"}, None, T),
                "missing identity field 'path'",
            ),
            (
                StateFact(
                    "Symbol",
                    symbol_state().identity,
                    symbol_state().props,
                    datetime(2026, 1, 1),  # noqa: DTZ001 - naive on purpose
                ),
                "naive datetime",
            ),
        ],
    )
    def test_violation_is_named(self, fact: StateFact | EdgeFact, message: str) -> None:
        with pytest.raises(OntologyViolation, match="nothing was written") as caught:
            check_facts(ONTOLOGY, "code", [symbol_state(), fact])
        assert message in str(caught.value)
        assert "record 1" in str(caught.value)

    def test_other_layer_label_is_refused(self) -> None:
        with pytest.raises(OntologyViolation, match="belongs to the code layer"):
            check_facts(ONTOLOGY, "trace", [symbol_state()])

    def test_other_layer_edge_is_refused(self) -> None:
        link = EdgeFact(
            "IMPLEMENTED_BY",
            NodeRef("Requirement", "r|REQ-001"),
            sym("a"),
            "r",
            {"status": "PROPOSED", "confidence": 0.5, "methods": ["test"], "commit": "a" * 40},
            T,
        )
        check_facts(ONTOLOGY, "trace", [link])
        with pytest.raises(OntologyViolation, match="belongs to the trace layer"):
            check_facts(ONTOLOGY, "code", [link])

    def test_layer_rule_over_many_batches_names_the_batch(self) -> None:
        link = EdgeFact(
            "VERIFIED_BY",
            NodeRef("Requirement", "r|REQ-001"),
            sym("a"),
            "r",
            {"status": "PROPOSED", "confidence": 0.5, "methods": ["test"], "commit": "a" * 40},
            T,
        )
        check_layer(ONTOLOGY, "code", [[symbol_state()], [StateFact("Ghost", {}, {}, T)]])
        with pytest.raises(OntologyViolation, match="batch 1 record 0") as caught:
            check_layer(ONTOLOGY, "code", [[symbol_state()], [link]])
        assert caught.value.details["rule"] == "one_writer"

    def test_graphiti_labels_are_not_strata_writes(self) -> None:
        fact = StateFact("Entity", {"uuid": "u", "group_id": "r"}, {}, T)
        with pytest.raises(OntologyViolation, match="written by graphiti"):
            check_facts(ONTOLOGY, "knowledge", [fact])


# Released ontology files, pinned here as well as in ontology/RELEASED: editing a
# released file and its RELEASED line together still fails this test. A new
# version adds its line in both places when it is released.
PINNED = {
    5: "81b3b425e31f6db620d2f16f4ac4f079b8c24aba1d099010ffba14896e065cb8",
    1: "ef04bee2f9f6650e779242488b815993a204964e663de75be340a843853c523d",
    2: "8b34377c9c6f0cf616d8aea8459ed494c56dee3ed18c955fe1ab2a3e8bf0bb76",
    3: "fc8d9eaa4ffc0db0742943da16277beba820f993d410e97ea1a12e156c84badd",
    4: "6ae599c7bb185c692721018c27b02e43c0284681d735c09b451bd69d2b716265",
    6: "3748ee1654fe16326fab9497091d9f8101f00b27ee1acf4f54bbbbd5d7b4c2d0",
}


class TestReleasedVersionsAreFrozen:
    """Every shipped version file is released, pinned by sha256, and checked on load."""

    def test_every_version_file_is_released_and_pinned(self) -> None:
        directory = PROJECT_ROOT / "ontology"
        released = released_versions(directory)
        assert released == PINNED
        assert sorted(ontology_files(directory)) == sorted(released)
        for version, path in ontology_files(directory).items():
            assert file_sha256(path) == PINNED[version], path.name

    def test_loader_takes_the_newest_version(self, tmp_path: Path) -> None:
        shipped = (PROJECT_ROOT / "ontology" / "strata.v1.yaml").read_text()
        (tmp_path / "strata.v1.yaml").write_text(shipped)
        (tmp_path / "strata.v2.yaml").write_text(shipped.replace("version: 1", "version: 2", 1))
        assert load_ontology(tmp_path).version == 2
        assert load_ontology(tmp_path, 1).version == 1

    def test_a_changed_released_file_is_refused(self, tmp_path: Path) -> None:
        shipped = PROJECT_ROOT / "ontology" / "strata.v1.yaml"
        (tmp_path / "strata.v1.yaml").write_bytes(shipped.read_bytes())
        (tmp_path / "RELEASED").write_text(f"strata.v1.yaml {PINNED[1]}\n")
        check_released(tmp_path)
        (tmp_path / "strata.v1.yaml").write_text(shipped.read_text() + "\n# one more line\n")
        with pytest.raises(OntologyViolation, match="released and frozen") as caught:
            load_ontology(tmp_path)
        assert "strata.v2.yaml" in str(caught.value)

    def test_a_missing_released_file_or_bad_line_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "strata.v1.yaml").write_bytes(
            (PROJECT_ROOT / "ontology" / "strata.v1.yaml").read_bytes()
        )
        (tmp_path / "RELEASED").write_text(
            f"strata.v1.yaml {PINNED[1]}\nstrata.v2.yaml {'0' * 64}\n"
        )
        with pytest.raises(OntologyViolation, match="v2 is missing"):
            load_ontology(tmp_path)
        (tmp_path / "RELEASED").write_text("strata.v1.yaml not-a-hash\n")
        with pytest.raises(OntologyViolation, match="RELEASED line 1"):
            load_ontology(tmp_path)


class TestReadsNameTheOntologysEndpoints:
    """Reads that look a node up by key name its possible labels (so a key index is
    used); the labels must be the ontology's endpoints, or a new one reads as absent."""

    @staticmethod
    def labels(predicate: str) -> set[str]:
        return set(re.findall(r"\b[a-z]:(\w+)", predicate))

    def test_link_reads(self) -> None:
        from strata.trace.reads import LINK_SOURCES, LINK_TARGETS, LINK_TYPES

        edges = [ONTOLOGY.edge(t) for t in LINK_TYPES]
        assert self.labels(LINK_SOURCES) == {label for e in edges for label in e.from_labels}
        assert self.labels(LINK_TARGETS) == {label for e in edges for label in e.to_labels}

    def test_callees_step(self) -> None:
        from strata.code.reads import CALLEES_STEP

        line = next(x for x in CALLEES_STEP.splitlines() if x.startswith("WHERE f:"))
        assert self.labels(line) == set(ONTOLOGY.edge("CALLS").from_labels)

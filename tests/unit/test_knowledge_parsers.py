"""Requirements, ADRs and trace files are read by parsers, with precise findings."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from strata.git import TreeEntry
from strata.knowledge.decisions import parse_decision
from strata.knowledge.requirements import (
    check_duplicates,
    classify,
    lint,
    parse_markdown,
    parse_yaml,
    with_duplicate_lint,
)
from strata.knowledge.sync import is_candidate
from strata.trace.files import parse_trace

SHA = "a" * 40


class TestEars:
    """Each EARS pattern is recognised from the clauses before `shall`."""

    @pytest.mark.parametrize(
        ("text", "pattern"),
        [
            ("The API shall answer within 50 ms.", "ubiquitous"),
            ("When a push arrives, the service shall reindex the repository.", "event"),
            ("While Neo4j is down, the API shall answer 503.", "state"),
            ("If a signature is wrong, then the service shall answer 401.", "unwanted"),
            ("Where JWT is configured, the API shall accept bearer tokens.", "optional"),
            ("While indexing, when a push arrives, the service shall queue it.", "complex"),
            ("The API answers quickly.", "unclassified"),
        ],
    )
    def test_classify(self, text: str, pattern: str) -> None:
        assert classify(text) == pattern

    def test_lint_findings(self) -> None:
        assert lint("The API shall answer.") == []
        assert lint("The API answers.")[0].startswith("no-shall")
        assert lint("The API shall log and shall retry.")[0].startswith("compound")


class TestRequirementFiles:
    """Atoms come from markdown lines and checklists, or YAML, never from code blocks."""

    def test_markdown(self) -> None:
        text = (
            "# Reqs\n"
            "REQ-001: The API shall answer.\n"
            "- [x] REQ-002: When a push arrives, the service shall reindex it.\n"
            "- [ ] **REQ-003**: The API answers.\n"
            "```\nREQ-004: The example shall not count.\n```\n"
        )
        parsed = parse_markdown("docs/req.md", text)
        assert [(r.req_id, r.line, r.ears, r.checked) for r in parsed.requirements] == [
            ("REQ-001", 2, "ubiquitous", None),
            ("REQ-002", 3, "event", True),
            ("REQ-003", 4, "unclassified", False),
        ]
        assert parsed.requirements[2].lint

    def test_yaml_shapes_and_errors(self) -> None:
        good = parse_yaml("r.yml", "requirements:\n  REQ-010: The API shall answer.\n")
        assert [r.req_id for r in good.requirements] == ["REQ-010"]
        listed = parse_yaml("r.yml", "- id: REQ-011\n  text: The API shall log.\n")
        assert [r.line for r in listed.requirements] == [1]
        broken = parse_yaml("r.yml", "REQ-012: [unclosed\n")
        assert [f.rule for f in broken.findings] == ["malformed-yaml"]
        assert broken.requirements == []
        bad_id = parse_yaml("r.yml", "REQ-1: too short\n")
        assert [f.rule for f in bad_id.findings] == ["bad-id"]

    def test_duplicate_ids_are_reported_after_the_first(self) -> None:
        parsed = parse_markdown("a.md", "REQ-001: The API shall answer.\n")
        again = parse_markdown("b.md", "REQ-001: The API shall also answer.\n")
        kept, findings = check_duplicates(parsed.requirements + again.requirements)
        assert [(f.path, f.rule) for f in findings] == [("b.md", "duplicate-id")]
        assert kept == parsed.requirements

    def test_duplicates_drop_only_the_later_atom(self) -> None:
        first = parse_yaml("a.yml", "REQ-002: The API shall answer.\n")
        both = parse_yaml(
            "b.yml", "{REQ-002: The API shall also answer., REQ-003: The API shall retry.}\n"
        )
        kept, findings = check_duplicates(first.requirements + both.requirements)
        assert [(r.req_id, r.path) for r in kept] == [("REQ-002", "a.yml"), ("REQ-003", "b.yml")]
        assert [(f.path, f.line, f.rule) for f in findings] == [("b.yml", 1, "duplicate-id")]


class TestDecisions:
    """ADRs give id, title, status, date, supersedes and constrained requirements."""

    def test_full_record(self) -> None:
        parsed = parse_decision(
            "docs/adr/0007-neo4j.md",
            "# ADR-0007: Use Neo4j\nStatus: accepted\nDate: 2025-03-01\nSupersedes: ADR-0003\n"
            "Constrains: REQ-001, REQ-004\n\n## Decision\nWe use Neo4j.\n",
        )
        decision = parsed.decision
        assert decision is not None
        assert (decision.decision_id, decision.title, decision.status) == (
            "ADR-0007",
            "Use Neo4j",
            "accepted",
        )
        assert decision.date == datetime(2025, 3, 1, tzinfo=UTC)
        assert decision.supersedes == ("ADR-0003",)
        assert decision.constrains == ("REQ-001", "REQ-004")
        assert decision.summary == "We use Neo4j."

    def test_status_section_and_file_number(self) -> None:
        parsed = parse_decision(
            "adr/0002-small.md", "# 2. Keep it small\n\n## Status\n\nDeprecated\n"
        )
        assert parsed.decision is not None
        assert (parsed.decision.decision_id, parsed.decision.status) == ("ADR-0002", "deprecated")

    def test_unknown_status_is_reported(self) -> None:
        parsed = parse_decision("adr/0003-x.md", "# ADR-0003: X\nStatus: maybe\n")
        assert parsed.decision is None
        assert [f.rule for f in parsed.findings] == ["adr-status"]


class TestTraceFiles:
    """Every broken rule of a link is reported with its line; a bad file yields no links."""

    def test_valid_file(self) -> None:
        parsed = parse_trace(
            "trace/a.yml",
            "links:\n  - requirement: REQ-001\n    target: app.f\n    kind: implemented_by\n"
            f"    status: VALIDATED\n    confidence: 0.9\n    commit: {SHA}\n"
            "    date: 2025-01-02\n",
        )
        assert parsed.findings == []
        link = parsed.links[0]
        assert (link.rel_type, link.status, link.line) == ("IMPLEMENTED_BY", "VALIDATED", 2)
        assert link.date == datetime(2025, 1, 2, tzinfo=UTC)

    def test_every_problem_is_named(self) -> None:
        parsed = parse_trace(
            "trace/b.yml",
            "links:\n  - requirement: REQ-001\n    target: app.f\n    kind: implemented_by\n"
            f"    commit: {SHA}\n"
            "  - requirement: RQ-9\n    kind: owns\n    status: MAYBE\n    confidence: 1.5\n"
            "    commit: abc\n    colour: red\n",
        )
        rules = {f.rule for f in parsed.findings}
        assert rules == {
            "bad-requirement",
            "unknown-kind",
            "unknown-status",
            "bad-confidence",
            "bad-commit",
            "unknown-field",
            "missing-target",
        }
        assert {f.line for f in parsed.findings} == {6}
        assert parsed.links == []  # one bad link refuses the whole file

    def test_malformed_yaml(self) -> None:
        parsed = parse_trace("trace/c.yml", "links: [\n")
        assert [f.rule for f in parsed.findings] == ["malformed-yaml"]


class TestCompoundAndDuplicateLint:
    """Two behaviours joined by "and" are compound; a duplicate id is linted on the kept atom."""

    @pytest.mark.parametrize(
        ("text", "compound"),
        [
            ("The system shall log every login attempt and lock the account.", True),
            ("The API shall validate input and return an error.", True),
            ("The API shall log and shall retry.", True),
            ("The API shall save orders and receipts.", False),
            ("The API shall accept cash and the card.", False),
            ("When an order is placed, the shop shall save it.", False),
        ],
    )
    def test_compound(self, text: str, compound: bool) -> None:
        assert any(m.startswith("compound") for m in lint(text)) is compound

    def test_duplicate_is_in_the_kept_atoms_lint(self) -> None:
        first = parse_markdown("a.md", "REQ-001: The API shall answer.\n")
        again = parse_markdown("b.md", "REQ-001: The API shall also answer.\n")
        kept, findings = check_duplicates(first.requirements + again.requirements)
        [req] = with_duplicate_lint(kept, findings)
        assert req.lint == ("duplicate-id: also declared at b.md:1",)


class TestRequirementFileSelection:
    """Requirement YAML is told by its name or folder, never by the word anywhere in the path."""

    @pytest.mark.parametrize(
        ("path", "candidate"),
        [
            ("docs/requirements/listed.yml", True),
            ("requirements.yml", True),
            ("docs/req-api.yaml", True),
            ("trace/bad_requirement.yml", False),
            ("trace/requirements.yml", False),
            ("config/bad_requirement.yml", False),
            ("docs/notes.md", True),
        ],
    )
    def test_candidates(self, path: str, candidate: bool) -> None:
        entry = TreeEntry(path=path, blob="0" * 40, mode="100644", size=10)
        assert is_candidate(entry) is candidate


class TestPathTargets:
    """A ``path::qualname`` target is kept as written (the trace sync resolves it by key)."""

    def test_path_form(self) -> None:
        parsed = parse_trace(
            "trace/x.yml",
            "links:\n  - requirement: REQ-001\n    target: app/orders.py::Order.save\n"
            f"    kind: implemented_by\n    commit: {SHA}\n",
        )
        assert parsed.findings == []
        assert parsed.links[0].target == "app/orders.py::Order.save"

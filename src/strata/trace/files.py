"""Trace links as files in the indexed repository: ``trace/<feature>.yml``.

    feature: checkout
    links:
      - requirement: REQ-001
        target: app.orders.Order.save      # a qualified name (or "path::qualname")
        kind: implemented_by               # implemented_by | affects | verified_by
        status: PROPOSED                   # PROPOSED | VALIDATED | STALE
        confidence: 0.8
        methods: [manual]
        evidence: "reviewed in PR 12"
        commit: 3f2c...                    # must resolve in git
        date: 2025-03-01
      - decision: ADR-0007                 # decision -> requirement links
        requirement: REQ-004
        kind: constrains
        ...

Every problem is reported with the file, line and rule; a file with any
problem contributes nothing (the rest of the run continues).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal

import yaml

from strata.findings import Finding
from strata.knowledge.requirements import REQ_ID

LinkKind = Literal["implemented_by", "affects", "verified_by", "constrains"]
KINDS: dict[str, str] = {
    "implemented_by": "IMPLEMENTED_BY",
    "affects": "AFFECTS",
    "verified_by": "VERIFIED_BY",
    "constrains": "CONSTRAINS",
}
STATUSES = ("PROPOSED", "VALIDATED", "STALE")
SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
ADR = re.compile(r"^ADR-\d{4,6}$")
KNOWN_FIELDS = {
    "requirement",
    "decision",
    "target",
    "kind",
    "status",
    "confidence",
    "methods",
    "evidence",
    "commit",
    "date",
}


@dataclass(frozen=True, slots=True)
class TraceLink:
    """One declared link, checked for shape (not yet against git or the graph)."""

    kind: LinkKind
    requirement: str
    target: str | None  # symbol qualified name, for implemented_by / affects / verified_by
    decision: str | None  # for constrains
    status: str
    confidence: float
    methods: tuple[str, ...]
    commit: str
    evidence: str | None
    date: datetime | None
    path: str
    line: int

    @property
    def rel_type(self) -> str:
        return KINDS[self.kind]


@dataclass(slots=True)
class ParsedTrace:
    feature: str | None = None
    links: list[TraceLink] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


class _Loader(yaml.SafeLoader):
    """A safe loader that records the line of every mapping."""


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> dict[str, Any]:
    mapping = loader.construct_mapping(node, deep=True)
    mapping["__line__"] = node.start_mark.line + 1
    return mapping  # type: ignore[return-value]


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_trace(path: str, text: str) -> ParsedTrace:
    out = ParsedTrace()
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        out.findings.append(
            Finding(
                path,
                mark.line + 1 if mark else 1,
                "malformed-yaml",
                f"not valid YAML: {getattr(exc, 'problem', exc)}",
            )
        )
        return out
    if not isinstance(data, dict) or not isinstance(data.get("links"), list):
        out.findings.append(
            Finding(path, 1, "trace-shape", "a trace file is a mapping with a `links:` list")
        )
        return out
    feature = data.get("feature")
    out.feature = str(feature) if feature is not None else None
    links: list[TraceLink] = []
    for entry in data["links"]:
        line = entry.get("__line__", 1) if isinstance(entry, dict) else 1
        link, problems = _link(path, line, entry)
        out.findings.extend(Finding(path, line, rule, message) for rule, message in problems)
        if link is not None:
            links.append(link)
    if not out.findings:
        out.links = links
    return out


def _link(path: str, line: int, entry: Any) -> tuple[TraceLink | None, list[tuple[str, str]]]:
    if not isinstance(entry, dict):
        return None, [("trace-entry", "each link is a mapping")]
    problems = _problems(entry)
    if problems:
        return None, problems
    kind = str(entry["kind"]).lower()
    return (
        TraceLink(
            kind=kind,  # type: ignore[arg-type]
            requirement=str(entry["requirement"]),
            target=str(entry["target"]).strip() if kind != "constrains" else None,
            decision=str(entry["decision"]) if kind == "constrains" else None,
            status=str(entry.get("status", "PROPOSED")).upper(),
            confidence=float(entry.get("confidence", 1.0)),
            methods=tuple(entry.get("methods", ["manual"])),
            commit=str(entry["commit"]),
            evidence=str(entry["evidence"])[:2000] if entry.get("evidence") is not None else None,
            date=_date(entry.get("date")),
            path=path,
            line=line,
        ),
        [],
    )


def _problems(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """Every rule the entry breaks, as (rule, message)."""
    problems: list[tuple[str, str]] = []
    unknown = set(entry) - KNOWN_FIELDS - {"__line__"}
    if unknown:
        problems.append(("unknown-field", f"unknown fields {sorted(unknown)}"))
    kind = str(entry.get("kind", "")).lower()
    if kind not in KINDS:
        problems.append(
            ("unknown-kind", f"kind {entry.get('kind')!r} is not one of {', '.join(KINDS)}")
        )
    if not REQ_ID.match(str(entry.get("requirement", ""))):
        problems.append(
            (
                "bad-requirement",
                f"requirement {entry.get('requirement')!r} is not an id like REQ-001",
            )
        )
    problems.extend(_end_problems(kind, entry))
    if str(entry.get("status", "PROPOSED")).upper() not in STATUSES:
        problems.append(
            (
                "unknown-status",
                f"status {entry.get('status')!r} is not one of {', '.join(STATUSES)}",
            )
        )
    confidence = entry.get("confidence", 1.0)
    if (
        not isinstance(confidence, int | float)
        or isinstance(confidence, bool)
        or not (0.0 <= float(confidence) <= 1.0)
    ):
        problems.append(("bad-confidence", f"confidence {confidence!r} is not within 0..1"))
    if not SHA.match(str(entry.get("commit", ""))):
        problems.append(
            (
                "bad-commit",
                f"commit {entry.get('commit')!r} is not a full sha (40 or 64 hex characters)",
            )
        )
    methods = entry.get("methods", ["manual"])
    if not isinstance(methods, list) or not all(isinstance(m, str) for m in methods):
        problems.append(("bad-methods", "methods is a list of strings"))
    if entry.get("date") is not None and _date(entry.get("date")) is None:
        problems.append(("bad-date", f"date {entry.get('date')!r} is not an ISO date"))
    return problems


def _end_problems(kind: str, entry: dict[str, Any]) -> list[tuple[str, str]]:
    if kind == "constrains":
        decision = entry.get("decision")
        if not isinstance(decision, str) or not ADR.match(decision):
            return [("bad-decision", "a constrains link needs `decision: ADR-0001`")]
        return []
    target = entry.get("target")
    if not isinstance(target, str) or not target.strip():
        return [("missing-target", "the link needs a `target` symbol")]
    return []


def _date(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None

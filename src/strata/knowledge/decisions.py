"""Architecture decision records (ADR markdown), parsed without a model.

Recognised shape (Nygard / MADR style, forgiving about headings):

    # ADR-0007: Use Neo4j for the graph          (or "# 7. Use Neo4j ...")
    Status: accepted                              (or a "## Status" section)
    Date: 2025-03-01
    Supersedes: ADR-0003
    Constrains: REQ-001, REQ-004
    Components: api, workers

The id comes from the title (``ADR-0007``) or the file name (``0007-use-neo4j.md``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from strata.findings import Finding

DecisionStatus = Literal["proposed", "accepted", "superseded", "deprecated"]
STATUSES: tuple[DecisionStatus, ...] = ("proposed", "accepted", "superseded", "deprecated")

_TITLE = re.compile(
    r"^#\s+(?:ADR[- ]?(?P<adr>\d+)\s*[:.-]\s*|(?P<num>\d+)\.\s+)?(?P<title>.+?)\s*$"
)
_FIELD = re.compile(
    r"^\s*[-*]?\s*\**(?P<name>status|date|supersedes|superseded by|constrains|"
    r"components|requirements)\**\s*:\s*(?P<value>.+?)\s*$",
    re.I,
)
_SECTION = re.compile(r"^#{2,3}\s+(?P<name>status|date|context|decision|consequences)\s*$", re.I)
_FILE_ID = re.compile(r"^(?:adr[-_]?)?(\d{1,6})[-_]", re.I)
_REQ = re.compile(r"REQ-\d{3,6}")
_ADR = re.compile(r"ADR[- ]?(\d{1,6})", re.I)


def adr_id(number: int | str) -> str:
    return f"ADR-{int(number):04d}"


@dataclass(frozen=True, slots=True)
class Decision:
    decision_id: str
    title: str
    status: DecisionStatus
    path: str
    line: int
    date: datetime | None = None
    supersedes: tuple[str, ...] = ()
    constrains: tuple[str, ...] = ()
    components: tuple[str, ...] = ()
    summary: str | None = None


@dataclass(slots=True)
class ParsedDecision:
    decision: Decision | None = None
    findings: list[Finding] = field(default_factory=list)


def _date(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.strip()[:25])
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_decision(path: str, text: str) -> ParsedDecision:
    """One ADR file; a file without a title or status is reported, not guessed."""
    out = ParsedDecision()
    title: str | None = None
    number: str | None = None
    title_line = 1
    values: dict[str, str] = {}
    section: str | None = None
    summary_lines: list[str] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if title is None:
            match = _TITLE.match(raw)
            if match:
                title, title_line = match.group("title"), line_no
                number = match.group("adr") or match.group("num")
                continue
        heading = _SECTION.match(raw)
        if heading:
            section = heading.group("name").lower()
            continue
        field_match = _FIELD.match(raw)
        if field_match:
            values.setdefault(field_match.group("name").lower(), field_match.group("value"))
            continue
        if section in ("status", "date") and raw.strip() and section not in values:
            values[section] = raw.strip()
        elif section == "decision" and raw.strip() and len(summary_lines) < 5:
            summary_lines.append(raw.strip())
    if number is None:
        match = _FILE_ID.match(posixpath.basename(path))
        number = match.group(1) if match else None
    if title is None or number is None:
        out.findings.append(
            Finding(
                path,
                1,
                "adr-no-title",
                "an ADR needs a `# ADR-0001: Title` heading or a numbered file name",
            )
        )
        return out
    status_text = (
        values.get("status", "").split()[0].lower().strip(".,") if values.get("status") else ""
    )
    if status_text not in STATUSES:
        out.findings.append(
            Finding(
                path,
                title_line,
                "adr-status",
                f"status {values.get('status')!r} is not one of {', '.join(STATUSES)}",
            )
        )
        return out
    date = _date(values["date"]) if "date" in values else None
    if "date" in values and date is None:
        out.findings.append(
            Finding(path, title_line, "adr-date", f"date {values['date']!r} is not an ISO date")
        )
    out.decision = Decision(
        decision_id=adr_id(number),
        title=title[:300],
        status=status_text,
        path=path,
        line=title_line,
        date=date,
        supersedes=tuple(adr_id(n) for n in _ADR.findall(values.get("supersedes", ""))),
        constrains=tuple(
            sorted(
                set(
                    _REQ.findall(
                        values.get("constrains", "") + " " + values.get("requirements", "")
                    )
                )
            )
        ),
        components=tuple(c.strip() for c in values.get("components", "").split(",") if c.strip()),
        summary=" ".join(summary_lines)[:1000] or None,
    )
    return out

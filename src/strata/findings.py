"""Problems found in repository files, reported with their place and rule."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem found while parsing: the file, line and rule."""

    path: str
    line: int
    rule: str
    message: str


def as_dicts(findings: Iterable[Finding], limit: int = 200) -> list[dict[str, Any]]:
    """JSON-safe findings for job records, at most ``limit``."""
    out: list[dict[str, Any]] = []
    for finding in findings:
        if len(out) >= limit:
            break
        out.append({"path": finding.path, "line": finding.line, "rule": finding.rule,
                    "message": finding.message})
    return out

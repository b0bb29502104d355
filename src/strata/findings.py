"""Problems found in repository files, reported with their place and rule, and stored.

The knowledge and trace writers store the findings of every sync as versioned
nodes (``KnowledgeFinding``, ``TraceFinding``; ontology v2) in one scope per
repository and layer: a finding is true from the commit that has the problem
until the commit that fixes it, and readable as of any moment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from strata.facts import Source, StateFact

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem found while parsing: the file, line and rule.

    ``error``: something was refused or dropped (a trace file, a duplicate id);
    ``warning``: kept, but worth fixing (lint, a link refused VALIDATED).
    """

    path: str
    line: int
    rule: str
    message: str
    severity: Severity = "error"


def as_dicts(findings: Iterable[Finding], limit: int = 200) -> list[dict[str, Any]]:
    """JSON-safe findings for job records, at most ``limit``."""
    out: list[dict[str, Any]] = []
    for finding in findings:
        if len(out) >= limit:
            break
        out.append(
            {
                "path": finding.path,
                "line": finding.line,
                "rule": finding.rule,
                "message": finding.message,
                "severity": finding.severity,
            }
        )
    return out


def findings_scope(repo: str, layer: str) -> str:
    """The one sync unit of a layer's findings in a repository."""
    return f"{repo}|{layer}|findings"


def finding_id(finding: Finding) -> str:
    """A stable id: the same problem at the same place is the same finding on every sync."""
    text = "\0".join((finding.path, str(finding.line), finding.rule, finding.message))
    return hashlib.blake2b(text.encode(), digest_size=10).hexdigest()


def finding_facts(
    label: str, layer: str, repo: str, findings: Iterable[Finding], *, at: datetime, sha: str
) -> list[StateFact]:
    """State facts asserting ``findings`` from ``at`` (each distinct finding once)."""
    facts: dict[str, StateFact] = {}
    for finding in findings:
        fid = finding_id(finding)
        facts.setdefault(
            fid,
            StateFact(
                label,
                {"repo": repo, "finding_id": fid},
                {
                    "path": finding.path,
                    "line": max(0, finding.line),
                    "rule": finding.rule,
                    "message": finding.message[:2000],
                    "severity": finding.severity,
                },
                at,
                source=Source(commit=sha, path=finding.path or None, line=finding.line or None),
                scope=findings_scope(repo, layer),
            ),
        )
    return list(facts.values())

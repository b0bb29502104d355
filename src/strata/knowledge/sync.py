"""Requirements and decisions from the repository's files into the knowledge layer.

Files are the truth: on every sync the requirement and decision files of a
commit are parsed (no model), and each file's facts are re-synced by scope,
so an edited requirement gets a new version of its text (same id, links kept)
and a removed one is closed at the commit's time. A decision superseded by a
later one is valid until the superseding decision's date.

Which files are read: ADR markdown under an ADR folder; other markdown with a
line that could be a requirement atom or a malformed one (``REQ-<digits>``,
optionally bold, then ``:``); and YAML files named like requirement files that
mention a requirement id in any form (``REQ-001: text``, ``"REQ-001": text``,
``- id: REQ-001``, ``- {id: REQ-001, ...}``, or a malformed ``REQ-1`` /
``req-001``, which the linter reports). A YAML file without any is not a
requirement file (an Ansible or pip ``requirements.yml``) and is skipped.
"""

from __future__ import annotations

import posixpath
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from strata.code.select import skip_reason_for_path
from strata.facts import EdgeFact, Fact, NodeRef, Source, StateFact
from strata.findings import Finding, as_dicts, finding_facts, findings_scope
from strata.git import Git, TreeEntry
from strata.graph.gateway import Gateway
from strata.graph.store import FactStore
from strata.knowledge.decisions import Decision, parse_decision
from strata.knowledge.requirements import (
    Requirement,
    check_duplicates,
    parse_file,
    with_duplicate_lint,
)
from strata.writers import KnowledgeWriter

MAX_BYTES = 1_000_000
ADR_DIRS = frozenset({"adr", "adrs", "decisions", "decision-records", "architecture-decisions"})
# Cheap pre-filters (see the module docstring): they only skip files that cannot
# declare a requirement or carry a malformed id.
_MARKDOWN_HINT = re.compile(rb"REQ-\d+(?:\*\*)?\s*:")
_YAML_HINT = re.compile(rb"(?i)REQ-\d")
# Kept, but worth fixing; every other finding dropped or refused something.
WARNINGS = frozenset({"lint", "adr-date"})

OPEN_KNOWLEDGE_SCOPES = """
MATCH (n:Requirement)-[r:STATE]->(n)
WHERE n.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL AND r.scope IS NOT NULL
RETURN DISTINCT r.scope AS scope
UNION
MATCH (n:Decision)-[r:STATE]->(n)
WHERE n.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL AND r.scope IS NOT NULL
RETURN DISTINCT r.scope AS scope
"""


@dataclass(slots=True)
class KnowledgeResult:
    repo: str
    commit: str
    requirements: int = 0
    decisions: int = 0
    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    facts: int = 0
    created: int = 0
    closed: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__ if k != "findings"}
        return {**out, "findings": as_dicts(self.findings)}


def is_adr(path: str) -> bool:
    parts = path.lower().split("/")
    return path.endswith((".md", ".markdown")) and any(p in ADR_DIRS for p in parts[:-1])


def is_candidate(entry: TreeEntry) -> bool:
    if skip_reason_for_path(entry, MAX_BYTES) is not None:
        return False
    name = posixpath.basename(entry.path).lower()
    if name.endswith((".md", ".markdown")):
        return True
    if not name.endswith((".yml", ".yaml")):
        return False
    # A requirements YAML is named like one (req*.yml) or lives in a requirements
    # folder; a file that only mentions the word (trace/bad_requirement.yml) is not
    # one, and trace/ holds trace links.
    folders = entry.path.lower().split("/")[:-1]
    if folders and folders[0] == "trace":
        return False
    return name.startswith("req") or any(f.startswith("requirement") for f in folders)


def _is_requirement_file(path: str, data: bytes) -> bool:
    """Whether a candidate (non-ADR) file is worth parsing for requirements."""
    hint = _YAML_HINT if path.endswith((".yml", ".yaml")) else _MARKDOWN_HINT  # as parse_file
    return hint.search(data) is not None


def scope_of(repo: str, path: str) -> str:
    """The sync unit of one knowledge file."""
    return f"{repo}|knowledge|{path}"


class KnowledgeSync:
    """The knowledge worker's parser-driven writer (requirements and decisions)."""

    def __init__(self, store: FactStore, gateway: Gateway) -> None:
        self.store = store
        self.gateway = gateway

    def sync(self, git: Git, repo: str, sha: str) -> KnowledgeResult:
        started = time.perf_counter()
        commit = git.commit(sha)
        result = KnowledgeResult(repo=repo, commit=commit.sha)
        entries = [e for e in git.tree(commit.sha) if is_candidate(e)]
        requirements: list[Requirement] = []
        decisions: list[Decision] = []
        present: set[str] = set()
        for entry, data in git.iter_blob_texts(entries):
            if b"\0" in data[:8192]:
                continue
            text = data.decode("utf-8", errors="replace")
            if is_adr(entry.path):
                parsed = parse_decision(entry.path, text)
                result.findings.extend(parsed.findings)
                if parsed.decision is not None:
                    decisions.append(parsed.decision)
                    present.add(entry.path)
            elif _is_requirement_file(entry.path, data):
                found = parse_file(entry.path, text)
                result.findings.extend(found.findings)
                requirements.extend(found.requirements)
                present.add(entry.path)
        requirements, duplicates = check_duplicates(requirements)
        result.findings.extend(duplicates)
        result.findings.extend(
            Finding(r.path, r.line, "lint", f"{r.req_id}: {message}", "warning")
            for r in requirements
            for message in r.lint
        )
        result.findings = [
            Finding(f.path, f.line, f.rule, f.message, "warning") if f.rule in WARNINGS else f
            for f in result.findings
        ]
        requirements = with_duplicate_lint(requirements, duplicates)
        states, edges = self._facts(repo, commit.sha, commit.committed_at, requirements, decisions)
        if "KnowledgeFinding" in self.store.ontology.nodes:  # stored from ontology v2 on
            states += finding_facts(
                "KnowledgeFinding",
                "knowledge",
                repo,
                result.findings,
                at=commit.committed_at,
                sha=commit.sha,
            )
        previous = {row["scope"] for row in self.gateway.read(OPEN_KNOWLEDGE_SCOPES, repo=repo)}
        scopes = sorted(
            previous | {scope_of(repo, p) for p in present} | {findings_scope(repo, "knowledge")}
        )
        closing = self.store.closures(
            "knowledge", scopes, [*states, *edges], at=commit.committed_at, repo=repo
        )
        closing_states, closing_edges = closing.states, closing.edges
        writer = KnowledgeWriter(self.store)
        for batch in ([*states, *closing_states], [*edges, *closing_edges]):
            if batch:
                written = writer.write(batch)
                result.facts += written.facts
                result.created += written.created
                result.closed += written.closed + written.expired
        result.requirements = len(requirements)
        result.decisions = len(decisions)
        result.files = len(present)
        result.seconds = round(time.perf_counter() - started, 4)
        return result

    def _facts(
        self,
        repo: str,
        sha: str,
        committed_at: datetime,
        requirements: list[Requirement],
        decisions: list[Decision],
    ) -> tuple[list[Fact], list[Fact]]:
        states: list[Fact] = []
        edges: list[Fact] = []
        for req in requirements:
            props: dict[str, Any] = {
                "text": req.text,
                "ears": req.ears,
                "path": req.path,
                "line": req.line,
                "lint": list(req.lint) or None,
                "checked": req.checked,
            }
            states.append(
                StateFact(
                    "Requirement",
                    {"repo": repo, "req_id": req.req_id},
                    {k: v for k, v in props.items() if v is not None},
                    committed_at,
                    source=Source(commit=sha, path=req.path, line=req.line),
                    scope=scope_of(repo, req.path),
                )
            )
        by_id = {d.decision_id: d for d in decisions}
        superseded_at: dict[str, datetime] = {}
        for decision in decisions:
            for old in decision.supersedes:
                when = decision.date or committed_at
                if old in by_id and (old not in superseded_at or when < superseded_at[old]):
                    superseded_at[old] = when
        node = self.store.ontology.node("Decision")
        keeps_constrains = "constrains" in node.state.all  # ontology v2 on
        for decision in decisions:
            start = decision.date or committed_at
            end = superseded_at.get(decision.decision_id)
            if end is not None and end <= start:
                end = None  # a decision dated after its successor: keep it open, report it
            props = {
                "title": decision.title,
                "status": decision.status,
                "path": decision.path,
                "date": decision.date,
                "summary": decision.summary,
                "components": list(decision.components) or None,
                "constrains": (list(decision.constrains) or None) if keeps_constrains else None,
            }
            identity = {"repo": repo, "decision_id": decision.decision_id}
            source = Source(commit=sha, path=decision.path, line=decision.line)
            states.append(
                StateFact(
                    "Decision",
                    identity,
                    {k: v for k, v in props.items() if v is not None},
                    start,
                    source=source,
                    scope=scope_of(repo, decision.path),
                )
            )
            if end is not None:
                # Superseded: no longer valid from the successor's date on.
                states.append(
                    StateFact(
                        "Decision",
                        identity,
                        None,
                        end,
                        change="invalidate",
                        source=source,
                        scope=scope_of(repo, decision.path),
                    )
                )
            for old in decision.supersedes:
                if old not in by_id:
                    continue
                edges.append(
                    EdgeFact(
                        "SUPERSEDES",
                        NodeRef(
                            "Decision",
                            node.make_key({"repo": repo, "decision_id": decision.decision_id}),
                        ),
                        NodeRef("Decision", node.make_key({"repo": repo, "decision_id": old})),
                        repo,
                        {},
                        decision.date or committed_at,
                        source=Source(commit=sha, path=decision.path, line=decision.line),
                        scope=scope_of(repo, decision.path),
                    )
                )
        return states, edges

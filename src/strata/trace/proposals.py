"""Proposed links derived from evidence (status PROPOSED).

A commit message naming ``REQ-###`` proposes IMPLEMENTED_BY links to the
symbols that commit changed; a test whose name, docstring or marker names
``REQ-###`` proposes a VERIFIED_BY link.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from strata.facts import NodeRef, Source
from strata.graph.gateway import Gateway
from strata.trace.link import Link, SyncContext, scope_of, unique

REQ_MENTION = re.compile(r"REQ[-_]?(\d{3,6})", re.I)

SYMBOL_NOW = """
UNWIND $keys AS key
MATCH (s:Symbol {key: key})-[st:STATE]->(s)
WHERE st.expired_at IS NULL AND st.invalid_at IS NULL
RETURN s.key AS key, st.test_framework AS test_framework
"""

TESTS_NAMING = """
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref
MATCH (s)-[st:STATE]->(s)
WHERE st.expired_at IS NULL AND st.invalid_at IS NULL AND st.test_framework IS NOT NULL
  AND (s.name =~ '(?i).*req[-_]?[0-9]{3,6}.*' OR st.docstring =~ '(?s).*REQ-[0-9]{3,6}.*'
       OR any(d IN coalesce(st.decorators, []) WHERE d =~ '(?s).*REQ-[0-9]{3,6}.*'))
RETURN s.key AS key, s.name AS name, st.docstring AS docstring, st.decorators AS decorators
"""


def proposals(
    gateway: Gateway,
    ctx: SyncContext,
    base: str | None,
    changed_symbols: list[str],
    declared: set[tuple[str, str, str]],
) -> list[Link]:
    """Links suggested by commit messages and test names (status PROPOSED)."""
    found = _from_commits(gateway, ctx, base, changed_symbols, declared)
    found += _from_tests(gateway, ctx, declared)
    return unique(found)


def _from_commits(
    gateway: Gateway,
    ctx: SyncContext,
    base: str | None,
    changed_symbols: list[str],
    declared: set[tuple[str, str, str]],
) -> list[Link]:
    git, repo, sha, requirements = ctx.git, ctx.repo, ctx.sha, ctx.requirements
    out: list[Link] = []
    if base is None or not changed_symbols or not git.has_commit(base):
        return out
    # Only symbols that still exist can be proposed as implementations.
    alive = {r["key"] for r in gateway.read(SYMBOL_NOW, keys=changed_symbols)}
    by_path: dict[str, list[str]] = defaultdict(list)
    for key in changed_symbols:
        if key in alive:
            by_path[key.split("|")[2]].append(key)
    for commit in git.commits_between(base, sha):
        mentioned = {f"REQ-{m}" for m in REQ_MENTION.findall(commit.message)}
        mentioned &= set(requirements)
        if not mentioned:
            continue
        touched = [k for p in git.files_changed(commit.sha) for k in by_path.get(p, [])]
        subject = commit.message.splitlines()[0][:200] if commit.message else ""
        for req_id in sorted(mentioned):
            for key in sorted(set(touched)):
                if ("IMPLEMENTED_BY", requirements[req_id], key) in declared:
                    continue
                out.append(
                    Link(
                        "IMPLEMENTED_BY",
                        NodeRef("Requirement", requirements[req_id]),
                        NodeRef("Symbol", key),
                        {
                            "status": "PROPOSED",
                            "confidence": 0.6,
                            "methods": ["commit-message"],
                            "commit": commit.sha,
                            "evidence": f"commit {commit.sha[:12]}: {subject}",
                        },
                        commit.committed_at,
                        scope_of(repo, f"commit:{commit.sha}"),
                        Source(commit=commit.sha),
                    )
                )
    return out


def _from_tests(
    gateway: Gateway, ctx: SyncContext, declared: set[tuple[str, str, str]]
) -> list[Link]:
    requirements, sha = ctx.requirements, ctx.sha
    out: list[Link] = []
    for row in gateway.read(TESTS_NAMING, repo=ctx.repo, ref=ctx.ref):
        for req_id, method in named_requirements(row):
            if req_id not in requirements:
                continue
            if ("VERIFIED_BY", requirements[req_id], row["key"]) in declared:
                continue
            out.append(
                Link(
                    "VERIFIED_BY",
                    NodeRef("Requirement", requirements[req_id]),
                    NodeRef("Symbol", row["key"]),
                    {
                        "status": "PROPOSED",
                        "confidence": 0.8,
                        "methods": [method],
                        "commit": sha,
                        "evidence": f"test {row['name']} names {req_id}",
                    },
                    ctx.at,
                    scope_of(ctx.repo, "tests"),
                    Source(commit=sha),
                )
            )
    return out


def named_requirements(row: dict[str, Any]) -> list[tuple[str, str]]:
    """The requirement ids a test names, each once, with where it names them."""
    found: list[tuple[str, str]] = []
    for match in REQ_MENTION.findall(row.get("name") or ""):
        found.append((f"REQ-{match}", "test-name"))
    for match in REQ_MENTION.findall(row.get("docstring") or ""):
        found.append((f"REQ-{match}", "test-docstring"))
    for decorator in row.get("decorators") or []:
        for match in REQ_MENTION.findall(decorator):
            found.append((f"REQ-{match}", "test-marker"))
    seen: set[str] = set()
    out = []
    for req_id, method in found:
        if req_id not in seen:
            seen.add(req_id)
            out.append((req_id, method))
    return out

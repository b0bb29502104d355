"""Declared links: ``trace/*.yml`` at a commit, checked against git and the code graph.

A link is kept only when its requirement (or decision) is declared, its commit
resolves in git, and its target symbol existed at that commit; a file with any
bad link writes nothing (each problem reported with file, line and rule).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from strata.facts import NodeRef, Source
from strata.findings import Finding
from strata.graph.gateway import Gateway
from strata.temporal import to_wire
from strata.trace.files import TraceLink, parse_trace
from strata.trace.link import Link, SyncContext, scope_of

TRACE_DIR = "trace/"

# Symbols by qualified name, each at its own valid time, in current belief.
SYMBOLS_AT = """
UNWIND $targets AS t
MATCH (s:Symbol {name: t.name})
WHERE s.repo = $repo AND s.ref = $ref
MATCH (s)-[st:STATE]->(s)
WHERE st.qualified_name = t.qn AND st.expired_at IS NULL
  AND st.valid_at <= datetime(t.at) AND (st.invalid_at IS NULL OR st.invalid_at > datetime(t.at))
RETURN t.qn AS qn, t.at AS at, s.key AS key, st.body_hash AS body_hash,
       st.test_framework AS test_framework
"""

SYMBOL_KEYS_AT = """
UNWIND $targets AS t
MATCH (s:Symbol {key: t.key})-[st:STATE]->(s)
WHERE st.expired_at IS NULL
  AND st.valid_at <= datetime(t.at) AND (st.invalid_at IS NULL OR st.invalid_at > datetime(t.at))
RETURN DISTINCT t.target AS target, t.at AS at, s.key AS key
"""


def declared_links(gateway: Gateway, ctx: SyncContext) -> tuple[list[Link], set[str], set[str]]:
    """Checked links of every trace file, the files' scopes, and the refused ones."""
    git, repo, result = ctx.git, ctx.repo, ctx.result
    entries = [
        e
        for e in git.tree(ctx.sha)
        if e.path.startswith(TRACE_DIR)
        and e.path.endswith((".yml", ".yaml"))
        and not e.is_symlink
        and e.size < 1_000_000
    ]
    links: list[Link] = []
    scopes: set[str] = set()
    refused: set[str] = set()
    for entry, data in git.iter_blob_texts(entries):
        scope = scope_of(repo, entry.path)
        scopes.add(scope)
        parsed = parse_trace(entry.path, data.decode("utf-8", errors="replace"))
        problems = list(parsed.findings)
        checked: list[Link] = []
        if not problems:
            checked, problems = _check(gateway, ctx, parsed.links, scope)
        if problems:
            result.findings.extend(problems)  # nothing from this file is written
            refused.add(scope)
            continue
        links.extend(checked)
    return links, scopes, refused


def _check(
    gateway: Gateway, ctx: SyncContext, declared: list[TraceLink], scope: str
) -> tuple[list[Link], list[Finding]]:
    """Each link against git and the graph; the problems refuse the whole file."""
    git, requirements, decisions = ctx.git, ctx.requirements, ctx.decisions
    commits = ctx.commits
    problems: list[Finding] = []
    for link in declared:
        if link.commit not in commits:
            commits[link.commit] = (
                git.commit(link.commit).committed_at if git.has_commit(link.commit) else None
            )
        if commits[link.commit] is None:
            problems.append(
                Finding(
                    link.path,
                    link.line,
                    "unknown-commit",
                    f"git cannot find commit {link.commit}; refused",
                )
            )
        if link.requirement not in requirements:
            problems.append(
                Finding(
                    link.path,
                    link.line,
                    "undeclared-requirement",
                    f"{link.requirement} is not declared in the repository",
                )
            )
        if link.decision is not None and link.decision not in decisions:
            problems.append(
                Finding(
                    link.path,
                    link.line,
                    "undeclared-decision",
                    f"{link.decision} is not declared in the repository",
                )
            )
    targets = [
        {"qn": link.target, "name": _last(link.target), "at": to_wire(when)}
        for link in declared
        if link.target and "::" not in link.target and (when := commits.get(link.commit))
    ]
    by_path = [
        {"target": link.target, "key": _path_key(ctx, link.target), "at": to_wire(when)}
        for link in declared
        if link.target and "::" in link.target and (when := commits.get(link.commit))
    ]
    found = _symbols_at(gateway, ctx.repo, ctx.ref, targets)
    found |= _symbols_by_key(gateway, by_path)
    out: list[Link] = []
    for link in declared:
        when = commits.get(link.commit)
        if when is None or link.requirement not in requirements:
            continue
        req_ref = NodeRef("Requirement", requirements[link.requirement])
        if link.kind == "constrains":
            if link.decision in decisions:
                out.append(
                    _link(link, NodeRef("Decision", decisions[link.decision]), req_ref, when, scope)
                )
            continue
        hit = found.get((link.target or "", to_wire(when)))
        if hit is None:
            problems.append(
                Finding(
                    link.path,
                    link.line,
                    "unknown-target",
                    f"no symbol {link.target!r} existed at commit {link.commit[:12]}",
                )
            )
            continue
        out.append(_link(link, req_ref, NodeRef("Symbol", hit["key"]), when, scope))
    return out, problems


def _symbols_at(
    gateway: Gateway, repo: str, ref: str, targets: list[dict[str, str]]
) -> dict[tuple[str, str], dict[str, Any]]:
    if not targets:
        return {}
    rows = gateway.read(SYMBOLS_AT, repo=repo, ref=ref, targets=targets)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        found.setdefault((row["qn"], row["at"]), row)
    return found


def _path_key(ctx: SyncContext, target: str) -> str:
    """The symbol key a ``path::qualname`` target names (the key is path and qualname)."""
    path, qualname = target.split("::", 1)
    identity = {"repo": ctx.repo, "ref": ctx.ref, "path": path.strip(), "qualname": qualname}
    return ctx.symbol_key(identity) if ctx.symbol_key is not None else ""


def _symbols_by_key(
    gateway: Gateway, targets: list[dict[str, str]]
) -> dict[tuple[str, str], dict[str, Any]]:
    if not targets:
        return {}
    rows = gateway.read(SYMBOL_KEYS_AT, targets=targets)
    return {(row["target"], row["at"]): row for row in rows}


def _link(link: TraceLink, src: NodeRef, dst: NodeRef, when: datetime, scope: str) -> Link:
    props: dict[str, Any] = {
        "status": link.status,
        "confidence": link.confidence,
        "methods": list(link.methods),
        "commit": link.commit,
        "evidence": link.evidence,
        "link_date": link.date,
    }
    return Link(
        link.rel_type,
        src,
        dst,
        {k: v for k, v in props.items() if v is not None},
        link.date or when,
        scope,
        Source(commit=link.commit, path=link.path, line=link.line),
    )


def _last(qualified: str) -> str:
    for sep in ("::", ":", "."):
        qualified = qualified.rsplit(sep, 1)[-1]
    return qualified

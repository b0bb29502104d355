"""The trace layer's writer: declared links, proposals from evidence, and settling after a push.

On every sync (after each reindex) the trace worker:

1. reads ``trace/*.yml`` at the commit and checks every link
   (:mod:`strata.trace.declared`), and turns the ``Constrains:`` lines of the
   current decisions (parsed by the knowledge layer) into CONSTRAINS links;
2. derives proposals from commit messages and test names
   (:mod:`strata.trace.proposals`);
3. settles every link against the new tree: STALE when a target vanished,
   VALIDATED only if earned, suspect when its target changed
   (:mod:`strata.trace.settle`);
4. writes only what changed (:mod:`strata.trace.reconcile`), closes what its
   scopes no longer produce, and stores the sync's findings (``TraceFinding``).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from strata.facts import Fact, NodeRef, Source, StateFact
from strata.findings import Finding, finding_facts, findings_scope
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.store import FactStore
from strata.ontology.model import STATE
from strata.temporal import native
from strata.trace.declared import declared_links
from strata.trace.link import Link, SyncContext, TraceResult, scope_of
from strata.trace.proposals import proposals
from strata.trace.reconcile import OpenLink, Slot, ended_slots, open_links, reconcile
from strata.trace.settle import settle
from strata.writers import TraceWriter

__all__ = ["TraceResult", "TraceSync", "scope_of"]

REQUIREMENT_IDS = """
MATCH (n:Requirement)
WHERE n.repo = $repo
MATCH (n)-[r:STATE]->(n)
WHERE r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN n.req_id AS id, n.key AS key
"""

DECISIONS = """
MATCH (n:Decision)
WHERE n.repo = $repo
MATCH (n)-[r:STATE]->(n)
WHERE r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN n.decision_id AS id, n.key AS key, r.constrains AS constrains, r.status AS status,
       r.path AS path, r.source_commit AS commit, r.valid_at AS valid_at
"""


class TraceSync:
    """The trace worker's writer: links from files and evidence, settled against the code."""

    def __init__(self, store: FactStore, gateway: Gateway) -> None:
        self.store = store
        self.gateway = gateway
        self.ontology = store.ontology

    def sync(
        self,
        git: Git,
        repo: str,
        ref: str,
        sha: str,
        *,
        base: str | None = None,
        changed_symbols: list[str] | None = None,
    ) -> TraceResult:
        started = time.perf_counter()
        commit = git.commit(sha)
        result = TraceResult(repo=repo, commit=commit.sha)
        at = commit.committed_at
        decisions = self.gateway.read(DECISIONS, repo=repo)
        ctx = SyncContext(
            git,
            repo,
            ref,
            commit.sha,
            at,
            {r["id"]: r["key"] for r in self.gateway.read(REQUIREMENT_IDS, repo=repo)},
            {r["id"]: r["key"] for r in decisions},
            result,
            symbol_key=self.ontology.node("Symbol").make_key,
            branch=self.ontology.node("Branch").make_key({"repo": repo, "ref": ref}),
        )
        links, scopes, refused = declared_links(self.gateway, ctx)
        declared_slots = {x.slot for x in links}
        links += _constraints(ctx, decisions, declared_slots)
        result.declared = len(links)
        proposed = proposals(self.gateway, ctx, base, changed_symbols or [], declared_slots)
        result.proposed = len(proposed)
        current = open_links(self.gateway, repo)  # every open link, read once
        settled = self._declared_props(settle(self.gateway, ctx, [*links, *proposed], current))
        scopes |= {x.scope for x in settled}
        scopes |= _open_scopes(current)
        scopes -= refused  # a refused file writes nothing: its earlier links stay as they were
        ended = ended_slots(self.gateway, settled, current)
        facts, unchanged = reconcile(repo, settled, current, scopes, at=at, ended=ended)
        facts += self._findings(repo, result.findings, at, commit.sha)
        if facts:
            written = TraceWriter(self.store).write(facts)
            result.facts = written.facts
            result.created = written.created
            result.closed = written.closed + written.expired
        result.unchanged = unchanged
        result.seconds = round(time.perf_counter() - started, 4)
        return result

    def _declared_props(self, links: list[Link]) -> list[Link]:
        """Only the properties the loaded ontology declares (v1 has no suspect, gone_commit)."""
        out = []
        for x in links:
            allowed = self.ontology.edge(x.rel).props.all
            props = {k: v for k, v in x.props.items() if k in allowed}
            out.append(Link(x.rel, x.src, x.dst, props, x.valid_at, x.scope, x.source))
        return out

    def _findings(self, repo: str, findings: list[Finding], at: datetime, sha: str) -> list[Fact]:
        """The sync's findings, and the closing of those it no longer finds."""
        if "TraceFinding" not in self.ontology.nodes:
            return []  # an ontology before v2 stores no findings (the job still reports them)
        asserted = finding_facts("TraceFinding", "trace", repo, findings, at=at, sha=sha)
        node = self.ontology.node("TraceFinding")
        wanted = {node.make_key(dict(f.identity)) for f in asserted}
        scope = findings_scope(repo, "trace")
        open_now = self.store.open_slots("trace", [scope], types=[STATE]).get(STATE, set())
        closing: list[Fact] = [
            StateFact.closing("TraceFinding", key, at)
            for label, key, _, _ in sorted(open_now)
            if label == "TraceFinding" and key not in wanted
        ]
        return [*asserted, *closing]


def _open_scopes(current: dict[Slot, OpenLink]) -> set[str]:
    """Scopes of every open link, but the commit-message proposals' own."""
    return {x.scope for x in current.values() if x.scope and "|trace|commit:" not in x.scope}


def _constraints(
    ctx: SyncContext, decisions: list[dict[str, Any]], declared: set[tuple[str, str, str]]
) -> list[Link]:
    """CONSTRAINS links from the ``Constrains:`` lines of the current decisions.

    The knowledge layer parses the ADRs; the trace layer, the one writer of
    links, links them. A trace file's own constrains link for the same pair wins.
    """
    out: list[Link] = []
    for row in decisions:
        path = str(row.get("path") or "")
        for req_id in row.get("constrains") or []:
            key = ctx.requirements.get(req_id)
            if key is None:
                ctx.result.findings.append(
                    Finding(
                        path,
                        1,
                        "undeclared-requirement",
                        f"{row['id']} constrains {req_id}, which is not declared",
                        "warning",
                    )
                )
                continue
            if ("CONSTRAINS", row["key"], key) in declared:
                continue
            commit = str(row.get("commit") or ctx.sha)
            out.append(
                Link(
                    "CONSTRAINS",
                    NodeRef("Decision", row["key"]),
                    NodeRef("Requirement", key),
                    {
                        "status": "VALIDATED" if row.get("status") == "accepted" else "PROPOSED",
                        "confidence": 1.0,
                        "methods": ["adr"],
                        "commit": commit,
                        "evidence": f"{path}: Constrains: {req_id}",
                    },
                    _time(row["valid_at"]),
                    scope_of(ctx.repo, f"adr:{path}"),
                    Source(commit=commit, path=path or None),
                )
            )
    return out


def _time(value: Any) -> datetime:
    result: datetime = native(value)
    return result

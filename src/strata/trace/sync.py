"""The trace layer's writer: declared links, proposals from evidence, and settling after a push.

On every sync (after each reindex) the trace worker:

1. reads ``trace/*.yml`` at the commit and checks every link
   (:mod:`strata.trace.declared`);
2. derives proposals from commit messages and test names
   (:mod:`strata.trace.proposals`);
3. settles every link against the new tree: STALE when a target vanished,
   VALIDATED only if earned (:mod:`strata.trace.settle`);
4. writes what changed and closes what its scopes no longer produce.
"""

from __future__ import annotations

import time
from typing import Any

from strata.code.git import Git
from strata.facts import EdgeFact, Fact
from strata.graph.gateway import Gateway
from strata.graph.store import FactStore
from strata.trace.declared import declared_links
from strata.trace.link import LINK_TYPES, SyncContext, TraceResult, scope_of
from strata.trace.proposals import proposals
from strata.trace.settle import settle
from strata.writers import TraceWriter

__all__ = ["TraceResult", "TraceSync", "scope_of"]

CURRENT_IDS = """
MATCH (n:{label})
WHERE n.repo = $repo
MATCH (n)-[r:STATE]->(n)
WHERE r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN n.{id} AS id, n.key AS key
"""

OPEN_IMPLEMENTED = """
MATCH (q)-[r:IMPLEMENTED_BY]->(t)
WHERE r.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN labels(q)[0] AS src_label, q.key AS src, labels(t)[0] AS dst_label, t.key AS dst,
       properties(r) AS props
"""

# The scopes of open links of the other types (IMPLEMENTED_BY's come from OPEN_IMPLEMENTED).
OPEN_SCOPES = "\nUNION\n".join(
    f"""
MATCH ()-[r:{rel}]->()
WHERE r.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL AND r.scope IS NOT NULL
RETURN DISTINCT r.scope AS scope
"""
    for rel in LINK_TYPES
    if rel != "IMPLEMENTED_BY"
)


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
        ctx = SyncContext(
            git,
            repo,
            ref,
            commit.sha,
            at,
            self._ids(repo, "Requirement", "req_id"),
            self._ids(repo, "Decision", "decision_id"),
            result,
        )
        links, scopes, refused = declared_links(self.gateway, ctx)
        declared_slots = {x.slot for x in links}
        result.declared = len(links)
        proposed = proposals(self.gateway, ctx, base, changed_symbols or [], declared_slots)
        result.proposed = len(proposed)
        implemented = self.gateway.read(OPEN_IMPLEMENTED, repo=repo)  # open, read once
        settled = settle(self.gateway, ctx, [*links, *proposed], implemented)
        facts: list[Fact] = [
            EdgeFact(x.rel, x.src, x.dst, repo, x.props, x.valid_at, source=x.source, scope=x.scope)
            for x in settled
        ]
        scopes |= {x.scope for x in settled}
        scopes |= self._open_scopes(repo, implemented)
        scopes -= refused  # a refused file writes nothing: its earlier links stay as they were
        closing_edges = self.store.closures("trace", sorted(scopes), facts, at=at, repo=repo).edges
        batch = [*facts, *closing_edges]
        if batch:
            written = TraceWriter(self.store).write(batch)
            result.facts = written.facts
            result.created = written.created
            result.closed = written.closed + written.expired
        result.seconds = round(time.perf_counter() - started, 4)
        return result

    def _ids(self, repo: str, label: str, id_field: str) -> dict[str, str]:
        text = CURRENT_IDS.format(label=label, id=id_field)
        return {row["id"]: row["key"] for row in self.gateway.read(text, repo=repo)}

    def _open_scopes(self, repo: str, implemented: list[dict[str, Any]]) -> set[str]:
        """Scopes of every open link, but the commit-message proposals' own."""
        found = [row["props"].get("scope") for row in implemented]
        found += [row["scope"] for row in self.gateway.read(OPEN_SCOPES, repo=repo)]
        return {scope for scope in found if scope and "|trace|commit:" not in scope}

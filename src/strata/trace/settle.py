"""Settling links against the new tree: STALE when a target vanished, VALIDATED only if earned.

A link whose target symbol vanished becomes STALE (a new version; the old one
closed), with the symbol that now has the same body (a move) or the same shape
(a rename) as the candidate new location. VALIDATED is granted only to an
implementation link whose commit is merged into the ref and whose requirement
has a verifying test that exists.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from strata.facts import NodeRef, Source
from strata.findings import Finding
from strata.graph.gateway import Gateway
from strata.temporal import from_wire, native
from strata.trace.link import Link, SyncContext
from strata.trace.proposals import SYMBOL_NOW

LAST_BODY = """
UNWIND $keys AS key
MATCH (s:Symbol {key: key})-[st:STATE]->(s)
WHERE st.expired_at IS NULL
WITH key, st ORDER BY st.valid_at DESC
WITH key, collect(st)[0] AS last
RETURN key, last.body_hash AS body_hash, last.shape_hash AS shape_hash,
       last.qualified_name AS qn, toString(last.invalid_at) AS gone_at
"""

SAME_BODY = """
UNWIND $hashes AS h
MATCH ()-[st:STATE {{{field}: h}}]->(s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref AND st.expired_at IS NULL AND st.invalid_at IS NULL
RETURN h AS hash, s.key AS key, st.qualified_name AS qn
"""


def settle(
    gateway: Gateway, ctx: SyncContext, links: list[Link], implemented: list[dict[str, Any]]
) -> list[Link]:
    """Links as they stand now: STALE when the target vanished, VALIDATED only if earned.

    Links from earlier commit-message proposals are carried over from the
    graph so that their targets are settled too.
    """
    git, repo, ref, sha, at, result = ctx.git, ctx.repo, ctx.ref, ctx.sha, ctx.at, ctx.result
    carried = _carried(implemented, {x.slot for x in links})
    links = [*links, *carried]
    targets = sorted({x.dst.key for x in links if x.dst.label == "Symbol"})
    alive = {row["key"]: row for row in gateway.read(SYMBOL_NOW, keys=targets)}
    gone = [k for k in targets if k not in alive]
    last = {r["key"]: r for r in gateway.read(LAST_BODY, keys=gone)} if gone else {}
    candidates = _candidates(gateway, repo, ref, last)
    verified: set[str] = {
        x.src.key
        for x in links
        if x.rel == "VERIFIED_BY" and x.dst.key in alive and alive[x.dst.key].get("test_framework")
    }
    merged_cache: dict[str, bool] = {}
    settled: list[Link] = []
    for link in links:
        props = dict(link.props)
        valid_at = link.valid_at
        if link.dst.label == "Symbol" and link.dst.key not in alive:
            props["status"] = "STALE"
            found = candidates.get(link.dst.key)
            props["evidence"] = (
                f"target {link.dst.key.split('|', 2)[-1]} is gone at commit {sha[:12]}"
                + (f"; same body now at {found}" if found else "")
            )
            if found:
                props["candidate"] = found
            # Stale from when the target vanished: the same instant on every later sync.
            gone_at = (last.get(link.dst.key) or {}).get("gone_at")
            valid_at = max(valid_at, from_wire(gone_at) if gone_at else at)
            result.stale += 1
        elif props.get("status") == "VALIDATED" and link.rel in ("IMPLEMENTED_BY", "AFFECTS"):
            commit = str(props["commit"])
            if commit not in merged_cache:
                # is_ancestor is False for a commit git lacks; a VALIDATED link is a
                # declared one, whose full sha _check already found. sha is ctx.sha,
                # the full sha git.commit gave, so there is nothing to resolve.
                merged_cache[commit] = git.is_ancestor(commit, sha)
            merged = merged_cache[commit]
            if not (merged and link.src.key in verified):
                props["status"] = "PROPOSED"
                why = "not merged into the ref" if not merged else "no verifying test exists"
                props["evidence"] = f"VALIDATED refused: {why}"
                result.findings.append(
                    Finding(
                        link.source.path or "",
                        link.source.line or 0,
                        "not-validated",
                        f"{link.rel} link from {link.src.key.split('|')[-1]} cannot be "
                        f"VALIDATED: {why}",
                    )
                )
        if props.get("status") == "VALIDATED":
            result.validated += 1
        settled.append(Link(link.rel, link.src, link.dst, props, valid_at, link.scope, link.source))
    return settled


def _candidates(
    gateway: Gateway, repo: str, ref: str, last: dict[str, dict[str, Any]]
) -> dict[str, str]:
    """For each vanished symbol, an open symbol with the same body, if exactly one."""
    if not last:
        return {}
    out: dict[str, str] = {}
    # The same body first (a move), then the same shape with the name masked (a rename).
    for field_name in ("body_hash", "shape_hash"):
        wanted = {k: r[field_name] for k, r in last.items() if r.get(field_name) and k not in out}
        if not wanted:
            continue
        same: dict[str, list[str]] = defaultdict(list)
        rows = gateway.read(
            SAME_BODY.format(field=field_name),
            hashes=sorted(set(wanted.values())),
            repo=repo,
            ref=ref,
        )
        for row in rows:
            same[row["hash"]].append(row["qn"] or row["key"])
        for key, value in wanted.items():
            options = same.get(value, [])
            if len(options) == 1:
                out[key] = options[0]
    return out


def _carried(implemented: list[dict[str, Any]], present: set[tuple[str, str, str]]) -> list[Link]:
    """Open commit-message proposals from earlier pushes (their scope is their commit)."""
    carried: list[Link] = []
    for row in implemented:
        props = dict(row["props"])
        scope = str(props.get("scope") or "")
        if "|trace|commit:" not in scope or ("IMPLEMENTED_BY", row["src"], row["dst"]) in present:
            continue
        content = {
            k: v
            for k, v in props.items()
            if k
            in (
                "status",
                "confidence",
                "methods",
                "commit",
                "evidence",
                "candidate",
                "link_date",
            )
        }
        carried.append(
            Link(
                "IMPLEMENTED_BY",
                NodeRef(row["src_label"], row["src"]),
                NodeRef(row["dst_label"], row["dst"]),
                content,
                _native_time(props["valid_at"]),
                scope,
                Source(commit=props.get("source_commit")),
            )
        )
    return carried


def _native_time(value: Any) -> datetime:
    result: datetime = native(value)
    return result

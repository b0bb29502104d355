"""Settling links against the new tree: STALE when a target vanished, VALIDATED only if earned.

A link whose target symbol vanished becomes STALE, with the symbol that now has
the same body (a move) or the same shape (a rename) as the candidate new
location, and the commit where the target vanished (found once, then kept).
VALIDATED is granted only to an implementation link whose commit is merged into
the ref and whose requirement has a verifying test that exists. A link whose
target's body or signature changed since the link was made is flagged
``suspect`` (with the commit of the change) and keeps its status: a reviewer
decides.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from strata.findings import Finding
from strata.graph.gateway import Gateway
from strata.temporal import from_wire, to_wire
from strata.trace.link import Link, SyncContext
from strata.trace.proposals import SYMBOL_NOW
from strata.trace.reconcile import OpenLink, Slot, carried_source

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

# The indexed head whose commit time is the instant a target vanished (the code
# layer closes what vanished at the indexed commit's time).
HEADS_AT = """
UNWIND $times AS at
MATCH (b:Branch {key: $branch})-[st:STATE]->(b)
WHERE st.expired_at IS NULL AND st.committed_at = datetime(at)
RETURN at, st.head AS head
"""

# For each (symbol, since): the first version after `since` whose body or
# signature differs from the version the link was made against.
CHANGED_SINCE = """
UNWIND $rows AS row
MATCH (s:Symbol {key: row.key})-[st:STATE]->(s)
WHERE st.expired_at IS NULL AND (st.invalid_at IS NULL OR st.invalid_at > datetime(row.since))
WITH row, st ORDER BY st.valid_at
WITH row, collect(st) AS versions
WITH row, versions[0] AS base, versions
WITH row, [v IN versions WHERE v.body_hash <> base.body_hash
           OR coalesce(v.signature, '') <> coalesce(base.signature, '')] AS changed
WHERE size(changed) > 0
RETURN row.key AS key, row.since AS since, changed[0].source_commit AS commit
"""

# Content a carried link keeps (the rest of its properties are bookkeeping).
LINK_CONTENT = (
    "status",
    "confidence",
    "methods",
    "commit",
    "evidence",
    "candidate",
    "link_date",
    "suspect",
    "suspect_commit",
    "gone_commit",
)


def settle(
    gateway: Gateway, ctx: SyncContext, links: list[Link], current: dict[Slot, OpenLink]
) -> list[Link]:
    """Links as they stand now: STALE when the target vanished, VALIDATED only if earned.

    Links from earlier commit-message proposals are carried over from the
    graph so that their targets are settled too.
    """
    links = [*_keep_first_commit(links, current), *_carried(current, {x.slot for x in links})]
    targets = sorted({x.dst.key for x in links if x.dst.label == "Symbol"})
    alive = {row["key"]: row for row in gateway.read(SYMBOL_NOW, keys=targets)}
    gone = [k for k in targets if k not in alive]
    last = {r["key"]: r for r in gateway.read(LAST_BODY, keys=gone)} if gone else {}
    candidates = _candidates(gateway, ctx.repo, ctx.ref, last)
    gone_commits = _gone_commits(gateway, ctx, last)
    changed = _changed_since(gateway, [x for x in links if x.dst.key in alive])
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
        previous = current.get(link.slot)
        if link.dst.label == "Symbol" and link.dst.key not in alive:
            for name in ("suspect", "suspect_commit"):
                props.pop(name, None)  # nothing left to review
            valid_at = _stale(
                ctx,
                link,
                props=props,
                previous=previous,
                last=last,
                candidates=candidates,
                gone_commits=gone_commits,
            )
        else:
            if props.get("status") == "STALE" and "|trace|commit:" in link.scope:
                # A carried proposal whose target is back: proposed again, from now.
                props["status"] = "PROPOSED"
                props["evidence"] = f"target is back at commit {ctx.sha[:12]}"
                for name in ("candidate", "gone_commit"):
                    props.pop(name, None)
            _suspect(link, props, previous, changed)
            if props.get("status") == "VALIDATED" and link.rel in ("IMPLEMENTED_BY", "AFFECTS"):
                _validate(ctx, link, props, verified, merged_cache)
        if props.get("status") == "VALIDATED":
            ctx.result.validated += 1
        settled.append(Link(link.rel, link.src, link.dst, props, valid_at, link.scope, link.source))
    return settled


def _stale(
    ctx: SyncContext,
    link: Link,
    *,
    props: dict[str, Any],
    previous: OpenLink | None,
    last: dict[str, dict[str, Any]],
    candidates: dict[str, str],
    gone_commits: dict[str, str],
) -> Any:
    """Make ``props`` STALE; returns the instant the target vanished (or the link's start)."""
    props["status"] = "STALE"
    found = candidates.get(link.dst.key)
    gone_at = (last.get(link.dst.key) or {}).get("gone_at")
    # The commit where the target vanished, recorded once.
    was = previous.props if previous is not None and previous.props.get("status") == "STALE" else {}
    when = to_wire(from_wire(gone_at)) if gone_at else ""
    gone_commit = str(was.get("gone_commit") or gone_commits.get(when) or ctx.sha)
    props["gone_commit"] = gone_commit
    props["evidence"] = (
        f"target {link.dst.key.split('|', 2)[-1]} is gone at commit {gone_commit[:12]}"
        + (f"; same body now at {found}" if found else "")
    )
    if found:
        props["candidate"] = found
    ctx.result.stale += 1
    return max(link.valid_at, from_wire(gone_at) if gone_at else ctx.at)


def _suspect(
    link: Link,
    props: dict[str, Any],
    previous: OpenLink | None,
    changed: dict[tuple[str, str], str | None],
) -> None:
    """Flag the link when its target's body or signature changed since the link was made.

    The flag stays until the link is made again (a declared link at a new commit).
    """
    was = previous.props if previous is not None else {}
    if was.get("suspect") and was.get("commit") == props.get("commit"):
        props["suspect"] = True
        if was.get("suspect_commit"):
            props["suspect_commit"] = was["suspect_commit"]
        return
    key = (link.dst.key, to_wire(link.valid_at))
    if key in changed:
        props["suspect"] = True
        if changed[key]:
            props["suspect_commit"] = str(changed[key])


def _validate(
    ctx: SyncContext,
    link: Link,
    props: dict[str, Any],
    verified: set[str],
    merged_cache: dict[str, bool],
) -> None:
    commit = str(props["commit"])
    if commit not in merged_cache:
        # is_ancestor is False for a commit git lacks; a VALIDATED link is a
        # declared one, whose full sha the declared check already found.
        merged_cache[commit] = ctx.git.is_ancestor(commit, ctx.sha)
    merged = merged_cache[commit]
    if merged and link.src.key in verified:
        return
    props["status"] = "PROPOSED"
    why = "not merged into the ref" if not merged else "no verifying test exists"
    props["evidence"] = f"VALIDATED refused: {why}"
    ctx.result.findings.append(
        Finding(
            link.source.path or "",
            link.source.line or 0,
            "not-validated",
            f"{link.rel} link from {link.src.key.split('|')[-1]} cannot be VALIDATED: {why}",
            "warning",
        )
    )


def _keep_first_commit(links: list[Link], current: dict[Slot, OpenLink]) -> list[Link]:
    """A test's proposal keeps the commit and start it was first made at (not every push's)."""
    out: list[Link] = []
    for link in links:
        previous = current.get(link.slot)
        if (
            previous is not None
            and link.scope.endswith("|trace|tests")
            and previous.scope == link.scope
            and previous.props.get("commit")
        ):
            props = {**link.props, "commit": previous.props["commit"]}
            out.append(
                Link(
                    link.rel, link.src, link.dst, props, previous.valid_at, link.scope, link.source
                )
            )
            continue
        out.append(link)
    return out


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


def _gone_commits(
    gateway: Gateway, ctx: SyncContext, last: dict[str, dict[str, Any]]
) -> dict[str, str]:
    """The indexed head at each instant a target vanished, by wire time."""
    here = to_wire(ctx.at)
    out = {here: ctx.sha}
    times = sorted(
        {to_wire(from_wire(str(r["gone_at"]))) for r in last.values() if r.get("gone_at")}
    )
    times = [t for t in times if t != here]
    if times and ctx.branch:
        for row in gateway.read(HEADS_AT, branch=ctx.branch, times=times):
            out[str(row["at"])] = str(row["head"])
    return out


def _changed_since(gateway: Gateway, links: list[Link]) -> dict[tuple[str, str], str | None]:
    """(symbol key, link start) -> the commit that changed the symbol's body or signature."""
    rows = sorted({(x.dst.key, to_wire(x.valid_at)) for x in links if x.dst.label == "Symbol"})
    if not rows:
        return {}
    found = gateway.read(CHANGED_SINCE, rows=[{"key": k, "since": s} for k, s in rows])
    return {(row["key"], row["since"]): row["commit"] for row in found}


def _carried(current: dict[Slot, OpenLink], present: set[Slot]) -> list[Link]:
    """Open commit-message proposals from earlier pushes (their scope is their commit)."""
    carried: list[Link] = []
    for slot, previous in current.items():
        if "|trace|commit:" not in previous.scope or slot in present:
            continue
        content = {k: v for k, v in previous.props.items() if k in LINK_CONTENT}
        carried.append(
            Link(
                previous.rel,
                previous.src,
                previous.dst,
                content,
                previous.valid_at,
                previous.scope,
                carried_source(previous),
            )
        )
    return carried

"""The trace layer: declared links, proposals from evidence, and settling after a push.

On every sync (after each reindex) the trace worker:

1. reads ``trace/*.yml`` at the commit and checks every link: the requirement
   (or decision) is declared, the commit resolves in git, and the target symbol
   existed at that commit; a file with any bad link writes nothing (reported
   with file, line and rule), the others go on;
2. derives proposals: a commit message naming ``REQ-###`` proposes
   IMPLEMENTED_BY links to the symbols that commit changed; a test whose name,
   docstring or marker names ``REQ-###`` proposes a VERIFIED_BY link;
3. settles every link against the new tree: a target that vanished makes the
   link STALE (a new version; the old one closed), with the symbol that now has
   the same body as the candidate new location;
4. grants VALIDATED only to an implementation link whose commit is merged into
   the ref and whose requirement has a verifying test that exists.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from strata.facts import EdgeFact, Fact, NodeRef, Source
from strata.findings import Finding, as_dicts
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.store import FactStore
from strata.temporal import from_wire, native, to_wire
from strata.trace.files import TraceLink, parse_trace
from strata.writers import TraceWriter

REQ_MENTION = re.compile(r"REQ[-_]?(\d{3,6})", re.I)
TRACE_DIR = "trace/"
LINK_TYPES = ("IMPLEMENTED_BY", "AFFECTS", "VERIFIED_BY", "CONSTRAINS")

CURRENT_IDS = """
MATCH (n:{label})
WHERE n.repo = $repo
MATCH (n)-[r:STATE]->(n)
WHERE r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN n.{id} AS id, n.key AS key
"""

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

SYMBOL_NOW = """
UNWIND $keys AS key
MATCH (s:Symbol {key: key})-[st:STATE]->(s)
WHERE st.expired_at IS NULL AND st.invalid_at IS NULL
RETURN s.key AS key, st.test_framework AS test_framework
"""

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

TESTS_NAMING = """
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref
MATCH (s)-[st:STATE]->(s)
WHERE st.expired_at IS NULL AND st.invalid_at IS NULL AND st.test_framework IS NOT NULL
  AND (s.name =~ '(?i).*req[-_]?[0-9]{3,6}.*' OR st.docstring =~ '(?s).*REQ-[0-9]{3,6}.*'
       OR any(d IN coalesce(st.decorators, []) WHERE d =~ '(?s).*REQ-[0-9]{3,6}.*'))
RETURN s.key AS key, s.name AS name, st.docstring AS docstring, st.decorators AS decorators
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


@dataclass(slots=True)
class TraceResult:
    repo: str
    commit: str
    declared: int = 0
    proposed: int = 0
    stale: int = 0
    validated: int = 0
    findings: list[Finding] = field(default_factory=list)
    facts: int = 0
    created: int = 0
    closed: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__ if k != "findings"}
        return {**out, "findings": as_dicts(self.findings)}


@dataclass(frozen=True, slots=True)
class _Link:
    """A link ready to write: its slot, props and provenance."""

    rel: str
    src: NodeRef
    dst: NodeRef
    props: dict[str, Any]
    valid_at: datetime
    scope: str
    source: Source


@dataclass(slots=True)
class _Ctx:
    """One sync: the repository, ref and commit, and what is declared there."""

    git: Git
    repo: str
    ref: str
    sha: str
    at: datetime
    requirements: dict[str, str]
    decisions: dict[str, str]
    result: TraceResult
    # Declared links' commits -> commit time (None: git cannot find it), across trace files.
    commits: dict[str, datetime | None] = field(default_factory=dict)


def scope_of(repo: str, name: str) -> str:
    return f"{repo}|trace|{name}"


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
        ctx = _Ctx(
            git,
            repo,
            ref,
            commit.sha,
            at,
            self._ids(repo, "Requirement", "req_id"),
            self._ids(repo, "Decision", "decision_id"),
            result,
        )
        links, scopes, refused = self._declared(ctx)
        declared_slots = {(x.rel, x.src.key, x.dst.key) for x in links}
        result.declared = len(links)
        proposals = self._proposals(ctx, base, changed_symbols or [], declared_slots)
        result.proposed = len(proposals)
        implemented = self.gateway.read(OPEN_IMPLEMENTED, repo=repo)  # open, read once
        settled = self._settle(ctx, [*links, *proposals], implemented)
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

    # -- declared links ---------------------------------------------------------------

    def _ids(self, repo: str, label: str, id_field: str) -> dict[str, str]:
        text = CURRENT_IDS.format(label=label, id=id_field)
        return {row["id"]: row["key"] for row in self.gateway.read(text, repo=repo)}

    def _declared(self, ctx: _Ctx) -> tuple[list[_Link], set[str], set[str]]:
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
        links: list[_Link] = []
        scopes: set[str] = set()
        refused: set[str] = set()
        for entry, data in git.iter_blob_texts(entries):
            scope = scope_of(repo, entry.path)
            scopes.add(scope)
            parsed = parse_trace(entry.path, data.decode("utf-8", errors="replace"))
            problems = list(parsed.findings)
            checked: list[_Link] = []
            if not problems:
                checked, problems = self._check(ctx, parsed.links, scope)
            if problems:
                result.findings.extend(problems)  # nothing from this file is written
                refused.add(scope)
                continue
            links.extend(checked)
        return links, scopes, refused

    def _check(
        self, ctx: _Ctx, declared: list[TraceLink], scope: str
    ) -> tuple[list[_Link], list[Finding]]:
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
            if link.target and (when := commits.get(link.commit)) is not None
        ]
        found = self._symbols_at(ctx.repo, ctx.ref, targets)
        out: list[_Link] = []
        for link in declared:
            when = commits.get(link.commit)
            if when is None or link.requirement not in requirements:
                continue
            req_ref = NodeRef("Requirement", requirements[link.requirement])
            if link.kind == "constrains":
                if link.decision in decisions:
                    out.append(
                        self._link(
                            link,
                            NodeRef("Decision", decisions[link.decision]),
                            req_ref,
                            when,
                            scope,
                        )
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
            out.append(self._link(link, req_ref, NodeRef("Symbol", hit["key"]), when, scope))
        return out, problems

    def _symbols_at(
        self, repo: str, ref: str, targets: list[dict[str, str]]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        if not targets:
            return {}
        rows = self.gateway.read(SYMBOLS_AT, repo=repo, ref=ref, targets=targets)
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for row in rows:
            found.setdefault((row["qn"], row["at"]), row)
        return found

    @staticmethod
    def _link(link: TraceLink, src: NodeRef, dst: NodeRef, when: datetime, scope: str) -> _Link:
        props: dict[str, Any] = {
            "status": link.status,
            "confidence": link.confidence,
            "methods": list(link.methods),
            "commit": link.commit,
            "evidence": link.evidence,
            "link_date": link.date,
        }
        return _Link(
            link.rel_type,
            src,
            dst,
            {k: v for k, v in props.items() if v is not None},
            link.date or when,
            scope,
            Source(commit=link.commit, path=link.path, line=link.line),
        )

    # -- proposals ----------------------------------------------------------------------

    def _proposals(
        self,
        ctx: _Ctx,
        base: str | None,
        changed_symbols: list[str],
        declared: set[tuple[str, str, str]],
    ) -> list[_Link]:
        """Links suggested by commit messages and test names (status PROPOSED)."""
        git, repo, ref, sha, requirements = ctx.git, ctx.repo, ctx.ref, ctx.sha, ctx.requirements
        proposals: list[_Link] = []
        if base is not None and git.has_commit(base) and changed_symbols:
            # Only symbols that still exist can be proposed as implementations.
            alive = {r["key"] for r in self.gateway.read(SYMBOL_NOW, keys=changed_symbols)}
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
                        proposals.append(
                            _Link(
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
        for row in self.gateway.read(TESTS_NAMING, repo=repo, ref=ref):
            for req_id, method in _named_requirements(row):
                if req_id not in requirements:
                    continue
                if ("VERIFIED_BY", requirements[req_id], row["key"]) in declared:
                    continue
                proposals.append(
                    _Link(
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
                        scope_of(repo, "tests"),
                        Source(commit=sha),
                    )
                )
        return _unique(proposals)

    # -- settle ---------------------------------------------------------------------------

    def _settle(
        self, ctx: _Ctx, links: list[_Link], implemented: list[dict[str, Any]]
    ) -> list[_Link]:
        """Links as they stand now: STALE when the target vanished, VALIDATED only if earned.

        Links from earlier commit-message proposals are carried over from the
        graph so that their targets are settled too.
        """
        git, repo, ref, sha, at, result = ctx.git, ctx.repo, ctx.ref, ctx.sha, ctx.at, ctx.result
        carried = _carried(implemented, {(x.rel, x.src.key, x.dst.key) for x in links})
        links = [*links, *carried]
        targets = sorted({x.dst.key for x in links if x.dst.label == "Symbol"})
        alive = {row["key"]: row for row in self.gateway.read(SYMBOL_NOW, keys=targets)}
        gone = [k for k in targets if k not in alive]
        last = {r["key"]: r for r in self.gateway.read(LAST_BODY, keys=gone)} if gone else {}
        candidates = self._candidates(repo, ref, last)
        verified: set[str] = {
            x.src.key
            for x in links
            if x.rel == "VERIFIED_BY"
            and x.dst.key in alive
            and alive[x.dst.key].get("test_framework")
        }
        merged_cache: dict[str, bool] = {}
        settled: list[_Link] = []
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
            settled.append(
                _Link(link.rel, link.src, link.dst, props, valid_at, link.scope, link.source)
            )
        return settled

    def _candidates(self, repo: str, ref: str, last: dict[str, dict[str, Any]]) -> dict[str, str]:
        """For each vanished symbol, an open symbol with the same body, if exactly one."""
        if not last:
            return {}
        out: dict[str, str] = {}
        # The same body first (a move), then the same shape with the name masked (a rename).
        for field_name in ("body_hash", "shape_hash"):
            wanted = {
                k: r[field_name] for k, r in last.items() if r.get(field_name) and k not in out
            }
            if not wanted:
                continue
            same: dict[str, list[str]] = defaultdict(list)
            rows = self.gateway.read(
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

    def _open_scopes(self, repo: str, implemented: list[dict[str, Any]]) -> set[str]:
        """Scopes of every open link, but the commit-message proposals' own."""
        found = [row["props"].get("scope") for row in implemented]
        found += [row["scope"] for row in self.gateway.read(OPEN_SCOPES, repo=repo)]
        return {scope for scope in found if scope and "|trace|commit:" not in scope}


def _carried(implemented: list[dict[str, Any]], present: set[tuple[str, str, str]]) -> list[_Link]:
    """Open commit-message proposals from earlier pushes (their scope is their commit)."""
    carried: list[_Link] = []
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
            _Link(
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


def _last(qualified: str) -> str:
    for sep in ("::", ":", "."):
        qualified = qualified.rsplit(sep, 1)[-1]
    return qualified


def _named_requirements(row: dict[str, Any]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for match in REQ_MENTION.findall(row.get("name") or ""):
        found.append((f"REQ-{match}", "test-name"))
    for match in REQ_MENTION.findall(row.get("docstring") or ""):
        found.append((f"REQ-{match}", "test-docstring"))
    for decorator in row.get("decorators") or []:
        for match in REQ_MENTION.findall(decorator):
            found.append((f"REQ-{match}", "test-marker"))
    seen: set[str] = set()
    unique = []
    for req_id, method in found:
        if req_id not in seen:
            seen.add(req_id)
            unique.append((req_id, method))
    return unique


def _unique(links: list[_Link]) -> list[_Link]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for link in links:
        slot = (link.rel, link.src.key, link.dst.key)
        if slot not in seen:
            seen.add(slot)
            out.append(link)
    return out


def _native_time(value: Any) -> datetime:
    result: datetime = native(value)
    return result

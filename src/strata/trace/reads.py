"""As-of reads of requirements, decisions and trace links."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from strata.code.positions import Positions, needs_layout
from strata.code.views import SymbolView
from strata.errors import ValidationError
from strata.graph.gateway import Gateway
from strata.temporal import AsOf, as_of_predicate, decode_fact, fact_projection

_STATE = as_of_predicate("st")
_LINK = as_of_predicate("r")
_STATE_PROPS = fact_projection("st")
_LINK_PROPS = fact_projection("r")
_TARGET_STATE = as_of_predicate("ts")
_TARGET_PROPS = fact_projection("ts")

REQUIREMENT = f"""
MATCH (n:Requirement {{key: $key}})-[st:STATE]->(n)
WHERE {_STATE}
RETURN properties(n) AS node, {_STATE_PROPS} AS state
LIMIT 1
"""

REQUIREMENTS = f"""
MATCH (n:Requirement)
WHERE n.repo = $repo AND n.key > $after
MATCH (n)-[st:STATE]->(n)
WHERE {_STATE} AND ($ears IS NULL OR st.ears = $ears)
RETURN properties(n) AS node, {_STATE_PROPS} AS state
ORDER BY n.key
LIMIT $first
"""

# Both directions return the link's target end (label and as-of state): a link
# reads the same whether it is found from its requirement or from its symbol.
# What both directions do once the link is matched: the target's state as of the
# moment (or the last name of a vanished one), ordered by the far end's key.
_LINK_READ = f"""
WHERE type(r) IN $types AND {_LINK}
OPTIONAL MATCH (t)-[ts:STATE]->(t)
WHERE {_TARGET_STATE}
WITH q, r, t, ts
OPTIONAL CALL (t, ts) {{
  // A vanished target (a STALE link's) has no state as of the moment: its last one names it.
  MATCH (t)-[ls:STATE]->(t)
  WHERE ts IS NULL AND ls.valid_at <= datetime($valid_at) AND ls.created_at <= datetime($known_at)
    AND (ls.expired_at IS NULL OR ls.expired_at > datetime($known_at))
  RETURN ls.qualified_name AS last_name
  ORDER BY ls.valid_at DESC
  LIMIT 1
}}
RETURN type(r) AS type, properties(q) AS source, properties(t) AS target,
       labels(t)[0] AS target_label, {_LINK_PROPS} AS link, {_TARGET_PROPS} AS target_state,
       last_name
"""

# The labels a link leaves from and arrives at (the ontology's endpoints of LINK_TYPES; a
# unit test holds them to it): the key lookup then seeks each label's key index instead
# of scanning every node of the graph (1.5 s per read on a graph of 590k nodes).
LINK_SOURCES = "(q:Requirement OR q:Decision)"
LINK_TARGETS = "(t:Symbol OR t:Requirement)"

LINKS_FROM = f"""
MATCH (q {{key: $key}})
WHERE {LINK_SOURCES}
MATCH (q)-[r]->(t)
{_LINK_READ}
ORDER BY type, t.key
LIMIT $first
"""

LINKS_INTO = f"""
MATCH (t {{key: $key}})
WHERE {LINK_TARGETS}
MATCH (t)<-[r]-(q)
{_LINK_READ}
ORDER BY type, q.key
LIMIT $first
"""

DECISIONS = f"""
MATCH (n:Decision)
WHERE n.repo = $repo
MATCH (n)-[st:STATE]->(n)
WHERE {_STATE} AND ($status IS NULL OR st.status = $status)
RETURN properties(n) AS node, {_STATE_PROPS} AS state
ORDER BY n.key
LIMIT $first
"""

# From the repository's requirements and decisions (few, found by label), not from
# every relationship of the graph (0.59 s on a graph holding Django).
REPORT_LINKS = f"""
MATCH (q)
WHERE {LINK_SOURCES} AND q.repo = $repo
MATCH (q)-[r]->(t)
WHERE type(r) IN $types AND r.repo = $repo AND {_LINK}
OPTIONAL MATCH (q)-[qs:STATE]->(q)
WHERE {as_of_predicate("qs")}
WITH q, r, t, qs
OPTIONAL CALL (t, r) {{
  // A STALE link's target is gone: its last state names it.
  MATCH (t)-[ls:STATE]->(t)
  WHERE r.status = 'STALE' AND ls.valid_at <= datetime($valid_at)
    AND ls.created_at <= datetime($known_at)
    AND (ls.expired_at IS NULL OR ls.expired_at > datetime($known_at))
  RETURN ls.qualified_name AS last_name
  ORDER BY ls.valid_at DESC
  LIMIT 1
}}
RETURN type(r) AS type, q.key AS source, labels(q)[0] AS source_label, qs IS NOT NULL AS declared,
       t.key AS target, labels(t)[0] AS target_label, {_LINK_PROPS} AS link, last_name
"""

LINK_TYPES = ["IMPLEMENTED_BY", "AFFECTS", "VERIFIED_BY", "CONSTRAINS"]


@dataclass(frozen=True, slots=True)
class Entity:
    """A requirement or decision as of some moment."""

    key: str
    repo: str
    id: str
    state: dict[str, Any]


@dataclass(frozen=True, slots=True)
class LinkView:
    type: str
    source_key: str
    target_key: str
    target_label: str
    link: dict[str, Any]
    other: dict[str, Any]  # the target's state as of the moment (whichever end was asked)


@dataclass(slots=True)
class TraceReport:
    repo: str
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    stale: list[LinkView] = field(default_factory=list)
    unimplemented: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    orphaned: list[LinkView] = field(default_factory=list)  # links from vanished requirements
    suspect: list[LinkView] = field(default_factory=list)  # targets changed since the link
    requirements: int = 0
    declared: list[str] = field(default_factory=list)  # the requirement ids


class TraceReads:
    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def requirement(self, key: str, as_of: AsOf, *, timeout: float | None = None) -> Entity | None:
        rows = self._gateway.read(REQUIREMENT, key=key, timeout=timeout, **as_of.params())
        if not rows:
            return None
        node = rows[0]["node"]
        return Entity(node["key"], node["repo"], node["req_id"], decode_fact(rows[0]["state"]))

    def requirements(
        self,
        repo: str,
        as_of: AsOf,
        *,
        ears: str | None = None,
        first: int = 50,
        after: str = "",
        timeout: float | None = None,
    ) -> list[Entity]:
        rows = self._gateway.read(
            REQUIREMENTS,
            repo=repo,
            ears=ears,
            first=first,
            after=after,
            timeout=timeout,
            **as_of.params(),
        )
        return [
            Entity(r["node"]["key"], repo, r["node"]["req_id"], decode_fact(r["state"]))
            for r in rows
        ]

    def decisions(
        self,
        repo: str,
        as_of: AsOf,
        *,
        status: str | None = None,
        first: int = 50,
        timeout: float | None = None,
    ) -> list[Entity]:
        rows = self._gateway.read(
            DECISIONS, repo=repo, status=status, first=first, timeout=timeout, **as_of.params()
        )
        return [
            Entity(r["node"]["key"], repo, r["node"]["decision_id"], decode_fact(r["state"]))
            for r in rows
        ]

    def links_from(
        self,
        key: str,
        as_of: AsOf,
        *,
        types: list[str] | None = None,
        first: int = 100,
        timeout: float | None = None,
    ) -> list[LinkView]:
        """Links leaving a requirement or decision, with their targets' states."""
        return self._links(LINKS_FROM, key, as_of, types=types, first=first, timeout=timeout)

    def links_of_requirement(
        self, key: str, as_of: AsOf, *, first: int = 100, timeout: float | None = None
    ) -> list[LinkView]:
        """Every link of a requirement: its symbols and tests, and the decisions constraining it."""
        out = self.links_from(key, as_of, first=first, timeout=timeout)
        out += self.links_into(key, as_of, types=["CONSTRAINS"], first=first, timeout=timeout)
        return out[:first]

    def links_into(
        self,
        key: str,
        as_of: AsOf,
        *,
        types: list[str] | None = None,
        first: int = 100,
        timeout: float | None = None,
    ) -> list[LinkView]:
        """Links arriving at a symbol or requirement, with that target's state."""
        return self._links(LINKS_INTO, key, as_of, types=types, first=first, timeout=timeout)

    def _links(
        self,
        text: str,
        key: str,
        as_of: AsOf,
        *,
        types: list[str] | None,
        first: int,
        timeout: float | None,
    ) -> list[LinkView]:
        rows = self._gateway.read(
            text, key=key, types=types or LINK_TYPES, first=first, timeout=timeout, **as_of.params()
        )
        out = []
        for r in rows:
            other = decode_fact(r["target_state"] or {})
            if not other and r.get("last_name"):
                other = {"qualified_name": r["last_name"]}  # a vanished target's last name
            out.append(
                LinkView(
                    r["type"],
                    r["source"]["key"],
                    r["target"]["key"],
                    r["target_label"],
                    decode_fact(r["link"]),
                    other,
                )
            )
        return self._placed(out, {r["target"]["key"]: r["target"] for r in rows}, as_of, timeout)

    def _placed(
        self,
        links: list[LinkView],
        targets: dict[str, dict[str, Any]],
        as_of: AsOf,
        timeout: float | None,
    ) -> list[LinkView]:
        """Symbol targets with their spans as of ``as_of`` (v4 keeps them on the File)."""
        wanted = {
            v.target_key
            for v in links
            if v.target_label == "Symbol" and "kind" in v.other and needs_layout(v.other)
        }
        if not wanted:
            return links
        views = [
            SymbolView.of(targets[k], next(v.other for v in links if v.target_key == k))
            for k in sorted(wanted)
        ]
        placed = {
            v.key: v.state for v in Positions(self._gateway).symbols(views, as_of, timeout=timeout)
        }
        return [replace(v, other=placed.get(v.target_key, v.other)) for v in links]

    def report(self, repo: str, as_of: AsOf, *, timeout: float | None = None) -> TraceReport:
        """Counts by status, stale links, and requirements lacking an implementation or a test."""
        report = TraceReport(repo)
        reqs = self.requirements(repo, as_of, first=100_000, timeout=timeout)
        report.requirements = len(reqs)
        report.declared = sorted(r.id for r in reqs)
        rows = self._gateway.read(
            REPORT_LINKS, repo=repo, types=LINK_TYPES, timeout=timeout, **as_of.params()
        )
        counts: dict[str, Counter[str]] = {}
        implemented: set[str] = set()
        tested: set[str] = set()
        for row in rows:
            link = decode_fact(row["link"])
            status = str(link.get("status", "?"))
            counts.setdefault(row["type"], Counter())[status] += 1
            named = {"qualified_name": row["last_name"]} if row.get("last_name") else {}
            view = LinkView(
                row["type"], row["source"], row["target"], row["target_label"], link, named
            )
            if link.get("suspect"):
                report.suspect.append(view)
            if status == "STALE":
                report.stale.append(view)
            elif row["type"] in ("IMPLEMENTED_BY", "AFFECTS"):
                implemented.add(row["source"])
            elif row["type"] == "VERIFIED_BY":
                tested.add(row["source"])
            if row["source_label"] == "Requirement" and not row["declared"]:
                report.orphaned.append(view)
        report.counts = {k: dict(v) for k, v in sorted(counts.items())}
        report.unimplemented = sorted(r.id for r in reqs if r.key not in implemented)
        report.untested = sorted(r.id for r in reqs if r.key not in tested)
        return report


FINDING_LABELS = {"knowledge": "KnowledgeFinding", "trace": "TraceFinding"}

FINDINGS = """
MATCH (n:{label})
WHERE n.repo = $repo
MATCH (n)-[st:STATE]->(n)
WHERE {state} AND ($rule IS NULL OR st.rule = $rule)
  AND ($severity IS NULL OR st.severity = $severity)
RETURN '{layer}' AS layer, {props} AS state
"""


@dataclass(frozen=True, slots=True)
class FindingView:
    """A stored finding as of some moment: which layer found it, where, and why."""

    layer: str
    state: dict[str, Any]


def findings(
    gateway: Gateway,
    repo: str,
    as_of: AsOf,
    *,
    layer: str | None = None,
    rule: str | None = None,
    severity: str | None = None,
    first: int = 100,
    timeout: float | None = None,
) -> list[FindingView]:
    """Findings of the knowledge and trace syncs (or one layer's), as of a moment."""
    layers = [layer] if layer is not None else sorted(FINDING_LABELS)
    unknown = [name for name in layers if name not in FINDING_LABELS]
    if unknown:
        raise ValidationError(
            f"findings come from the knowledge or trace layer, not {unknown[0]!r}"
        )
    text = "\nUNION ALL\n".join(
        FINDINGS.format(label=FINDING_LABELS[name], layer=name, state=_STATE, props=_STATE_PROPS)
        for name in layers
    )
    rows = gateway.read(
        f"CALL () {{ {text} }}\nRETURN layer, state\n"
        "ORDER BY layer, state.path, state.line, state.rule\nLIMIT $first",
        repo=repo,
        rule=rule,
        severity=severity,
        first=first,
        timeout=timeout,
        **as_of.params(),
    )
    return [FindingView(row["layer"], decode_fact(row["state"])) for row in rows]

"""Generic as-of reads: one entity's state, histories, and changes between instants.

Every read filters facts with :func:`strata.temporal.as_of_predicate`, so all
queries agree on what "as of (valid_at, known_at)" means.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from strata.graph.gateway import Gateway, checked_label, checked_rel_type
from strata.ontology.model import STATE, Ontology
from strata.temporal import AsOf, as_of_predicate, aware, native

Axis = Literal["valid", "known"]

NODE_AS_OF = """
MATCH (n:{label} {{key: $key}})-[r:STATE]->(n)
WHERE {as_of}
RETURN properties(n) AS node, properties(r) AS state
LIMIT 1
"""

STATE_HISTORY = """
MATCH (n:{label} {{key: $key}})-[r:STATE]->(n)
WHERE r.expired_at IS NULL OR r.expired_at > r.created_at
RETURN properties(r) AS props
ORDER BY r.created_at, r.valid_at
"""

EDGE_HISTORY = """
MATCH (a:{src} {{key: $src}})-[r:{rel}]->(b:{dst} {{key: $dst}})
WHERE r.expired_at IS NULL OR r.expired_at > r.created_at
RETURN properties(r) AS props
ORDER BY r.created_at, r.valid_at
"""

CHANGES = """
MATCH (a)-[r:{rel}]->(b)
WHERE r.repo = $repo AND r.{field} >= $start AND r.{field} < $end {extra}
RETURN '{rel}' AS type, labels(a)[0] AS src_label, a.key AS src, labels(b)[0] AS dst_label,
       b.key AS dst, '{kind}' AS change, properties(r) AS props
ORDER BY r.{field}
LIMIT $limit
"""


def _plain(props: dict[str, Any]) -> dict[str, Any]:
    return {k: native(v) for k, v in props.items()}


@dataclass(frozen=True, slots=True)
class FactVersion:
    """One stored version with its four times, content and bookkeeping."""

    valid_at: datetime
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    props: dict[str, Any]

    @classmethod
    def of(cls, props: dict[str, Any]) -> FactVersion:
        values = _plain(props)
        return cls(
            valid_at=values.pop("valid_at"),
            invalid_at=values.pop("invalid_at", None),
            created_at=values.pop("created_at"),
            expired_at=values.pop("expired_at", None),
            props=values,
        )


@dataclass(frozen=True, slots=True)
class NodeState:
    """A node's identity and the state visible at one as-of position."""

    node: dict[str, Any]
    state: FactVersion


@dataclass(frozen=True, slots=True)
class Change:
    """A fact version opened or closed inside a window."""

    type: str
    src_label: str
    src: str
    dst_label: str
    dst: str
    change: Literal["opened", "closed"]
    version: FactVersion


class Reads:
    """As-of reads shared by the API and the CLI."""

    def __init__(self, gateway: Gateway, ontology: Ontology) -> None:
        self._gateway = gateway
        self._ontology = ontology

    def node_state(self, label: str, key: str, as_of: AsOf) -> NodeState | None:
        """The node and its state as of (valid_at, known_at), or None if not visible."""
        self._ontology.node(label)
        text = NODE_AS_OF.format(label=checked_label(label), as_of=as_of_predicate("r"))
        rows = self._gateway.read(text, key=key, valid_at=as_of.valid_at, known_at=as_of.known_at)
        if not rows:
            return None
        node = _plain(rows[0]["node"])
        return NodeState(node=node, state=FactVersion.of(rows[0]["state"]))

    def state_history(self, label: str, key: str) -> list[FactVersion]:
        """Every version of a node's state, ordered by transaction then valid time."""
        self._ontology.node(label)
        text = STATE_HISTORY.format(label=checked_label(label))
        return [FactVersion.of(r["props"]) for r in self._gateway.read(text, key=key)]

    def edge_history(
        self, rel_type: str, src_label: str, src: str, dst_label: str, dst: str
    ) -> list[FactVersion]:
        """Every version of one edge fact."""
        self._ontology.edge(rel_type)
        self._ontology.node(src_label)
        self._ontology.node(dst_label)
        text = EDGE_HISTORY.format(
            rel=checked_rel_type(rel_type),
            src=checked_label(src_label),
            dst=checked_label(dst_label),
        )
        return [FactVersion.of(r["props"]) for r in self._gateway.read(text, src=src, dst=dst)]

    def changes(
        self,
        repo: str,
        start: datetime,
        end: datetime,
        *,
        axis: Axis = "valid",
        limit: int = 1000,
    ) -> list[Change]:
        """Facts opened or closed in [start, end).

        ``axis="valid"``: what changed in the world (``valid_at`` / ``invalid_at``
        inside the window), according to current belief. ``axis="known"``: what
        Strata recorded or retracted (``created_at`` / ``expired_at``).
        """
        start = aware(start, what="start")
        end = aware(end, what="end")
        opened, closed = (
            ("valid_at", "invalid_at") if axis == "valid" else ("created_at", "expired_at")
        )
        extra = "AND r.expired_at IS NULL" if axis == "valid" else ""
        parts = []
        for rel in self._ontology.fact_types():
            for field, kind in ((opened, "opened"), (closed, "closed")):
                parts.append(
                    CHANGES.format(
                        rel=checked_rel_type(rel), field=field, kind=kind, extra=extra
                    ).strip()
                )
        text = "\nUNION ALL\n".join(parts)
        rows = self._gateway.read(text, repo=repo, start=start, end=end, limit=limit)
        found = [
            Change(
                type=r["type"],
                src_label=r["src_label"],
                src=r["src"],
                dst_label=r["dst_label"],
                dst=r["dst"],
                change=r["change"],
                version=FactVersion.of(r["props"]),
            )
            for r in rows
        ]
        found.sort(key=lambda c: (_change_time(c, axis), c.change != "closed"))
        return found[:limit]


def _change_time(change: Change, axis: Axis) -> datetime:
    v = change.version
    if axis == "valid":
        return v.valid_at if change.change == "opened" else (v.invalid_at or v.valid_at)
    return v.created_at if change.change == "opened" else (v.expired_at or v.created_at)


__all__ = ["STATE", "Axis", "Change", "FactVersion", "NodeState", "Reads", "native"]

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
from strata.temporal import (
    AsOf,
    as_of_predicate,
    aware,
    current_predicate,
    decode_fact,
    fact_projection,
    from_wire,
    native,
    to_wire,
)

Axis = Literal["valid", "known"]
PROJECTION = fact_projection("r")

NODE_AS_OF = """
MATCH (n:{label} {{key: $key}})-[r:STATE]->(n)
WHERE {as_of}
RETURN properties(n) AS node, {projection} AS state
LIMIT 1
"""

NODE_CURRENT = """
MATCH (n:{label} {{key: $key}})-[r:STATE]->(n)
WHERE {current}
RETURN properties(n) AS node, {projection} AS state
LIMIT 1
"""

STATE_HISTORY = """
MATCH (n:{label} {{key: $key}})-[r:STATE]->(n)
WHERE r.expired_at IS NULL OR r.expired_at > r.created_at
RETURN {projection} AS props
ORDER BY r.created_at, r.valid_at
"""

EDGE_HISTORY = """
MATCH (a:{src} {{key: $src}})-[r:{rel}]->(b:{dst} {{key: $dst}})
WHERE r.expired_at IS NULL OR r.expired_at > r.created_at
RETURN {projection} AS props
ORDER BY r.created_at, r.valid_at
"""

CHANGES = """
MATCH (a)-[r:{rel}]->(b)
WHERE r.repo = $repo AND r.{field} >= datetime($start) AND r.{field} < datetime($end) {extra}
RETURN '{rel}' AS type, labels(a)[0] AS src_label, a.key AS src, labels(b)[0] AS dst_label,
       b.key AS dst, '{kind}' AS change, toString(r.{field}) AS at, {projection} AS props
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
    invalidated_at: datetime | None = None

    @classmethod
    def of(cls, props: dict[str, Any]) -> FactVersion:
        values = decode_fact(props)
        return cls(
            valid_at=values.pop("valid_at"),
            invalid_at=values.pop("invalid_at", None),
            created_at=values.pop("created_at"),
            expired_at=values.pop("expired_at", None),
            invalidated_at=values.pop("invalidated_at", None),
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
    at: datetime
    version: FactVersion


class Reads:
    """As-of reads shared by the API and the CLI."""

    def __init__(self, gateway: Gateway, ontology: Ontology) -> None:
        self._gateway = gateway
        self._ontology = ontology

    @property
    def gateway(self) -> Gateway:
        return self._gateway

    def node_state(self, label: str, key: str, as_of: AsOf) -> NodeState | None:
        """The node and its state as of (valid_at, known_at), or None if not visible."""
        self._ontology.node(label)
        text = NODE_AS_OF.format(
            label=checked_label(label), as_of=as_of_predicate("r"), projection=PROJECTION
        )
        times = as_of.params()
        rows = self._gateway.read(
            text, key=key, valid_at=times["valid_at"], known_at=times["known_at"]
        )
        if not rows:
            return None
        node = _plain(rows[0]["node"])
        return NodeState(node=node, state=FactVersion.of(rows[0]["state"]))

    def node_current(self, label: str, key: str) -> NodeState | None:
        """The node's current state: believed now and not yet invalidated.

        The cheapest read; it differs from ``node_state(AsOf.at())`` only for
        facts whose valid time starts in the future.
        """
        self._ontology.node(label)
        text = NODE_CURRENT.format(
            label=checked_label(label), current=current_predicate("r"), projection=PROJECTION
        )
        rows = self._gateway.read(text, key=key)
        if not rows:
            return None
        return NodeState(node=_plain(rows[0]["node"]), state=FactVersion.of(rows[0]["state"]))

    def state_history(
        self, label: str, key: str, *, limit: int | None = None, timeout: float | None = None
    ) -> list[FactVersion]:
        """Every version of a node's state (the first ``limit``), ordered by transaction
        then valid time."""
        self._ontology.node(label)
        text = STATE_HISTORY.format(label=checked_label(label), projection=PROJECTION)
        if limit is not None:
            text += "LIMIT $limit\n"
        rows = self._gateway.read(text, key=key, limit=limit, timeout=timeout)
        return [FactVersion.of(r["props"]) for r in rows]

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
            projection=PROJECTION,
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
        Strata recorded or retracted (``created_at``; ``expired_at`` or
        ``invalidated_at``).
        """
        start = aware(start, what="start")
        end = aware(end, what="end")
        fields: tuple[tuple[str, str], ...]
        if axis == "valid":
            fields = (("valid_at", "opened"), ("invalid_at", "closed"))
        else:
            fields = (
                ("created_at", "opened"),
                ("expired_at", "closed"),
                ("invalidated_at", "closed"),
            )
        extra = "AND r.expired_at IS NULL" if axis == "valid" else ""
        parts = []
        for rel in self._ontology.fact_types():
            for field, kind in fields:
                parts.append(
                    CHANGES.format(
                        rel=checked_rel_type(rel),
                        field=field,
                        kind=kind,
                        extra=extra,
                        projection=PROJECTION,
                    ).strip()
                )
        text = "\nUNION ALL\n".join(parts)
        rows = self._gateway.read(
            text, repo=repo, start=to_wire(start), end=to_wire(end), limit=limit
        )
        found = [
            Change(
                type=r["type"],
                src_label=r["src_label"],
                src=r["src"],
                dst_label=r["dst_label"],
                dst=r["dst"],
                change=r["change"],
                at=from_wire(r["at"]),
                version=FactVersion.of(r["props"]),
            )
            for r in rows
        ]
        found.sort(key=lambda c: (c.at, c.change != "closed"))
        return found[:limit]


__all__ = ["STATE", "Axis", "Change", "FactVersion", "NodeState", "Reads", "native"]

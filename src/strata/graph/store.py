"""The bitemporal fact store: checked, batched, locked writes through the gateway.

One :meth:`FactStore.apply` is one write transaction:

1. every fact is checked against the ontology and the writer's layer (the whole
   batch is refused on any violation; nothing is written);
2. nodes are merged by key and locked (``SET _lock`` then ``REMOVE``: Neo4j's
   documented way to take a write lock before reading);
3. the current versions of every touched slot are read in one statement per
   label or edge type;
4. :func:`strata.temporal.plan_set` plans the changes in Python;
5. expirations and new versions are written with ``UNWIND $rows``.

Labels and relationship types reach Cypher only after the ontology declared
them and the gateway's identifier checks passed; every value is a parameter.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata.errors import OntologyViolation, TransientDatabaseError
from strata.facts import EdgeFact, Fact, StateFact, check_facts, node_key
from strata.graph.gateway import Gateway, Tx, checked_label, checked_rel_type
from strata.ontology.model import STATE, Layer, Ontology
from strata.temporal import Plan, Version, aware, content_hash, native, now, plan_set, utc_values

TIME_FIELDS = ("valid_at", "invalid_at", "created_at", "expired_at")

MERGE_NODES = """
UNWIND $rows AS row
MERGE (n:{label} {{key: row.key}})
ON CREATE SET n += row.identity, n.created_at = $tx
SET n._lock = true
REMOVE n._lock
"""

LOCK_NODES = """
UNWIND $keys AS key
MATCH (n:{label} {{key: key}})
SET n._lock = true
REMOVE n._lock
RETURN key
"""

EXISTING_NODES = """
UNWIND $keys AS key
MATCH (n:{label} {{key: key}})
RETURN key
"""

CURRENT_STATE = """
UNWIND $keys AS key
MATCH (n:{label} {{key: key}})-[r:STATE]->(n)
WHERE r.expired_at IS NULL
RETURN key, elementId(r) AS ref, properties(r) AS props
"""

CURRENT_EDGES = """
UNWIND $pairs AS pair
MATCH (a:{src} {{key: pair[0]}})-[r:{rel}]->(b:{dst} {{key: pair[1]}})
WHERE r.expired_at IS NULL
RETURN pair[0] AS src, pair[1] AS dst, elementId(r) AS ref, properties(r) AS props
"""

EXPIRE = """
UNWIND $refs AS ref
MATCH ()-[r]->()
WHERE elementId(r) = ref AND r.expired_at IS NULL
SET r.expired_at = $tx
RETURN count(r) AS expired
"""

CREATE_STATE = """
UNWIND $rows AS row
MATCH (n:{label} {{key: row.key}})
CREATE (n)-[r:STATE]->(n)
SET r = row.props
"""

CREATE_EDGES = """
UNWIND $rows AS row
MATCH (a:{src} {{key: row.src}})
MATCH (b:{dst} {{key: row.dst}})
CREATE (a)-[r:{rel}]->(b)
SET r = row.props
"""

StateSlot = tuple[str, str]  # label, key
EdgeSlot = tuple[str, str, str, str, str]  # type, src label, src key, dst label, dst key


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one apply did."""

    facts: int
    created: int
    expired: int
    unchanged: int
    tx_time: datetime


@dataclass(slots=True)
class _Batch:
    """A checked batch, grouped by slot, with node keys resolved."""

    states: dict[StateSlot, list[StateFact]]
    edges: dict[EdgeSlot, list[EdgeFact]]
    identities: dict[StateSlot, Mapping[str, Any]]


def _version(ref: str, props: Mapping[str, Any]) -> Version:
    values = {k: native(v) for k, v in props.items()}
    return Version(
        hash=str(values.get("hash", "")),
        valid_at=values["valid_at"],
        invalid_at=values.get("invalid_at"),
        created_at=values["created_at"],
        expired_at=values.get("expired_at"),
        ref=ref,
        payload={k: v for k, v in values.items() if k not in TIME_FIELDS},
    )


def _row_props(version: Version) -> dict[str, Any]:
    props = {k: utc_values(v) for k, v in version.payload.items() if v is not None}
    props["valid_at"] = version.valid_at
    props["created_at"] = version.created_at
    if version.invalid_at is not None:
        props["invalid_at"] = version.invalid_at
    return props


class FactStore:
    """Bitemporal writes of checked facts; one instance per process is enough."""

    def __init__(
        self,
        gateway: Gateway,
        ontology: Ontology,
        *,
        clock: Callable[[], datetime] = now,
    ) -> None:
        self._gateway = gateway
        self._ontology = ontology
        self._clock = clock

    @property
    def ontology(self) -> Ontology:
        return self._ontology

    def apply(
        self, layer: Layer, facts: Sequence[Fact], *, tx_time: datetime | None = None
    ) -> WriteResult:
        """Check and write ``facts`` in one transaction, as the ``layer`` writer.

        Several facts for one slot apply in order. ``tx_time`` fixes the
        transaction time (tests, imports); by default it is the clock, never
        earlier than the newest version it touches.
        """
        check_facts(self._ontology, layer, facts)
        batch = self._group(facts)
        explicit = aware(tx_time, what="tx_time") if tx_time is not None else None
        return self._gateway.write_tx(
            lambda tx: self._apply_tx(tx, batch, len(facts), explicit), timeout=600
        )

    def _group(self, facts: Sequence[Fact]) -> _Batch:
        states: dict[StateSlot, list[StateFact]] = defaultdict(list)
        edges: dict[EdgeSlot, list[EdgeFact]] = defaultdict(list)
        identities: dict[StateSlot, Mapping[str, Any]] = {}
        for fact in facts:
            if isinstance(fact, StateFact):
                slot = (fact.label, node_key(self._ontology, fact.label, fact.identity))
                states[slot].append(fact)
                identities.setdefault(slot, fact.identity)
            else:
                edges[
                    (fact.type, fact.src.label, fact.src.key, fact.dst.label, fact.dst.key)
                ].append(fact)
        return _Batch(dict(states), dict(edges), identities)

    # -- the transaction ---------------------------------------------------------------

    def _apply_tx(
        self, tx: Tx, batch: _Batch, count: int, explicit_tx: datetime | None
    ) -> WriteResult:
        stamp = explicit_tx or self._clock()
        self._merge_and_lock(tx, batch, stamp)
        current = self._read_current(tx, batch)
        if explicit_tx is None:
            newest = [v.created_at for versions in current.values() for v in versions]
            stamp = max([stamp, *newest])
        plans: dict[tuple[str, ...], Plan] = {}
        unchanged = 0
        for slot, state_facts in batch.states.items():
            plan, same = self._plan_slot(current.get(slot, []), state_facts, stamp)
            plans[slot] = plan
            unchanged += same
        for edge_slot, edge_facts in batch.edges.items():
            plan, same = self._plan_slot(current.get(edge_slot, []), edge_facts, stamp)
            plans[edge_slot] = plan
            unchanged += same
        expired, created = self._write(tx, batch, plans, stamp)
        return WriteResult(count, created, expired, unchanged, stamp)

    def _merge_and_lock(self, tx: Tx, batch: _Batch, stamp: datetime) -> None:
        merge_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        lock_keys: dict[str, set[str]] = defaultdict(set)
        for (label, key), state_facts in batch.states.items():
            if any(f.props is not None for f in state_facts):
                identity = dict(batch.identities[(label, key)])
                merge_rows[label].append({"key": key, "identity": identity})
            else:
                lock_keys[label].add(key)
        for label in sorted(merge_rows):
            rows = sorted(merge_rows[label], key=lambda r: r["key"])
            tx.run(self._cypher(MERGE_NODES, label=label), rows=rows, tx=stamp)
        for label in sorted(lock_keys):
            tx.run(self._cypher(LOCK_NODES, label=label), keys=sorted(lock_keys[label]))
        src_keys: dict[str, set[str]] = defaultdict(set)
        dst_keys: dict[str, set[str]] = defaultdict(set)
        for _, src_label, src_key, dst_label, dst_key in batch.edges:
            src_keys[src_label].add(src_key)
            dst_keys[dst_label].add(dst_key)
        missing: list[str] = []
        for label in sorted(src_keys):
            wanted = src_keys[label]
            found = tx.run(self._cypher(LOCK_NODES, label=label), keys=sorted(wanted))
            missing.extend(f"{label} {k!r}" for k in sorted(wanted - {r["key"] for r in found}))
        for label in sorted(dst_keys):
            wanted = dst_keys[label]
            found = tx.run(self._cypher(EXISTING_NODES, label=label), keys=sorted(wanted))
            missing.extend(f"{label} {k!r}" for k in sorted(wanted - {r["key"] for r in found}))
        if missing:
            shown = ", ".join(missing[:20]) + (
                f" and {len(missing) - 20} more" if len(missing) > 20 else ""
            )
            raise OntologyViolation(
                f"edge endpoints do not exist: {shown}; nothing was written",
                rule="missing_endpoint",
                missing=missing[:200],
            )

    def _read_current(self, tx: Tx, batch: _Batch) -> dict[tuple[str, ...], list[Version]]:
        current: dict[tuple[str, ...], list[Version]] = defaultdict(list)
        by_label: dict[str, list[str]] = defaultdict(list)
        for label, key in batch.states:
            by_label[label].append(key)
        for label, keys in by_label.items():
            for row in tx.run(self._cypher(CURRENT_STATE, label=label), keys=keys):
                current[(label, row["key"])].append(_version(row["ref"], row["props"]))
        by_type: dict[tuple[str, str, str], list[list[str]]] = defaultdict(list)
        for rel, src_label, src_key, dst_label, dst_key in batch.edges:
            by_type[(rel, src_label, dst_label)].append([src_key, dst_key])
        for (rel, src_label, dst_label), pairs in by_type.items():
            text = self._cypher(CURRENT_EDGES, rel=rel, src=src_label, dst=dst_label)
            for row in tx.run(text, pairs=pairs):
                slot = (rel, src_label, row["src"], dst_label, row["dst"])
                current[slot].append(_version(row["ref"], row["props"]))
        return current

    def _plan_slot(
        self, versions: list[Version], facts: Iterable[Fact], stamp: datetime
    ) -> tuple[Plan, int]:
        plan = Plan()
        unchanged = 0
        for fact in facts:
            content = dict(fact.props) if fact.props is not None else None
            digest = content_hash(content) if content is not None else None
            payload = None
            if content is not None:
                repo = fact.identity["repo"] if isinstance(fact, StateFact) else fact.repo
                payload = {
                    **content,
                    "repo": repo,
                    "scope": fact.scope,
                    "hash": digest,
                    "ontology": self._ontology.version,
                    "change": fact.change,
                    **fact.source.props(),
                }
            before = (len(plan.expire), len(plan.create))
            versions, plan = plan_set(
                versions,
                content=digest,
                payload=payload,
                start=fact.valid_at,
                end=fact.invalid_at,
                tx=stamp,
                plan=plan,
            )
            if (len(plan.expire), len(plan.create)) == before:
                unchanged += 1
        return plan, unchanged

    def _write(
        self, tx: Tx, batch: _Batch, plans: Mapping[tuple[str, ...], Plan], stamp: datetime
    ) -> tuple[int, int]:
        refs = [v.ref for plan in plans.values() for v in plan.expire if v.ref is not None]
        if refs:
            row = tx.run_one(EXPIRE, refs=refs, tx=stamp)
            done = int(row["expired"]) if row else 0
            if done != len(refs):
                raise TransientDatabaseError(
                    f"concurrent write: expected to expire {len(refs)} versions, expired {done}"
                )
        state_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        edge_rows: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        created = 0
        for slot, plan in plans.items():
            for version in plan.create:
                created += 1
                if len(slot) == 2:
                    state_rows[slot[0]].append({"key": slot[1], "props": _row_props(version)})
                else:
                    rel, src_label, src_key, dst_label, dst_key = slot
                    edge_rows[(rel, src_label, dst_label)].append(
                        {"src": src_key, "dst": dst_key, "props": _row_props(version)}
                    )
        for label, rows in state_rows.items():
            tx.run(self._cypher(CREATE_STATE, label=label), rows=rows)
        for (rel, src_label, dst_label), rows in edge_rows.items():
            tx.run(self._cypher(CREATE_EDGES, rel=rel, src=src_label, dst=dst_label), rows=rows)
        return len(refs), created

    def _cypher(self, template: str, **names: str) -> str:
        """Fill label and type slots after whitelisting them against the ontology."""
        filled: dict[str, str] = {}
        for slot, name in names.items():
            if slot == "rel":
                if name != STATE:
                    self._ontology.edge(name)
                filled[slot] = checked_rel_type(name)
            else:
                self._ontology.node(name)
                filled[slot] = checked_label(name)
        return template.format(**filled)

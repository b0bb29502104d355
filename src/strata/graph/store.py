"""The bitemporal fact store: checked, batched, locked writes through the gateway.

Only the layer writers (:mod:`strata.writers`) write through it: a writer
checks every fact against the ontology and its layer (the whole write is
refused on any violation; nothing is written), then hands the batch to
:meth:`FactStore._apply`, which is one write transaction:

1. the batch is grouped by slot, node keys resolved;
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
from strata.facts import EdgeFact, Fact, NodeRef, StateFact, state_key
from strata.graph.gateway import Gateway, Tx, checked_label, checked_rel_type
from strata.ontology.model import STATE, Layer, Ontology
from strata.temporal import (
    TIME_FIELDS,
    Plan,
    Version,
    aware,
    content_hash,
    decode_fact,
    now,
    plan_set,
    to_wire,
    utc_values,
)

MERGE_NODES = """
UNWIND $rows AS row
MERGE (n:{label} {{key: row.key}})
ON CREATE SET n += row.identity, n.created_at = datetime($tx)
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

# Only current versions that end after the earliest change planned for the
# slot can be touched; the rest (older valid history) is never read.
CURRENT_STATE = """
UNWIND $slots AS slot
MATCH (n:{label} {{key: slot.key}})-[r:STATE]->(n)
WHERE r.expired_at IS NULL AND (r.invalid_at IS NULL OR r.invalid_at > datetime(slot.since))
RETURN slot.key AS key, elementId(r) AS ref, {projection} AS props
"""

CURRENT_EDGES = """
UNWIND $slots AS slot
MATCH (a:{src} {{key: slot.src}})-[r:{rel}]->(b:{dst} {{key: slot.dst}})
WHERE r.expired_at IS NULL AND (r.invalid_at IS NULL OR r.invalid_at > datetime(slot.since))
RETURN slot.src AS src, slot.dst AS dst, elementId(r) AS ref, {projection} AS props
"""

EXPIRE = """
UNWIND $refs AS ref
MATCH ()-[r]->()
WHERE elementId(r) = ref AND r.expired_at IS NULL
SET r.expired_at = datetime($tx)
RETURN count(r) AS expired
"""

CREATE_STATE = """
UNWIND $rows AS row
MATCH (n:{label} {{key: row.key}})
CREATE (n)-[r:STATE]->(n)
SET r = row.props, r.valid_at = datetime(row.valid_at), r.invalid_at = datetime(row.invalid_at),
    r.created_at = datetime(row.created_at)
"""

CLOSE = """
UNWIND $rows AS row
MATCH ()-[r]->()
WHERE elementId(r) = row.ref AND r.expired_at IS NULL AND r.invalid_at IS NULL
SET r.invalid_at = datetime(row.invalid_at), r.invalidated_at = datetime($tx)
RETURN count(r) AS closed
"""

COPY_VERSIONS = """
UNWIND $rows AS row
MATCH (a)-[old:{rel}]->(b)
WHERE elementId(old) = row.copy_of
CREATE (a)-[r:{rel}]->(b)
SET r = properties(old), r.valid_at = datetime(row.valid_at),
    r.invalid_at = datetime(row.invalid_at), r.created_at = datetime(row.created_at)
REMOVE r.expired_at, r.invalidated_at
"""

CREATE_EDGES = """
UNWIND $rows AS row
MATCH (a:{src} {{key: row.src}})
MATCH (b:{dst} {{key: row.dst}})
CREATE (a)-[r:{rel}]->(b)
SET r = row.props, r.valid_at = datetime(row.valid_at), r.invalid_at = datetime(row.invalid_at),
    r.created_at = datetime(row.created_at)
RETURN count(r) AS created
"""

# A fresh slot's node and first version in one pass: one key lookup per row, not two.
MERGE_FRESH_STATE = """
UNWIND $rows AS row
MERGE (n:{label} {{key: row.key}})
ON CREATE SET n += row.identity, n.created_at = datetime($tx)
CREATE (n)-[r:STATE]->(n)
SET r = row.props, r.valid_at = datetime(row.valid_at), r.invalid_at = datetime(row.invalid_at),
    r.created_at = datetime(row.created_at)
"""

MERGE_FRESH = """
UNWIND $rows AS row
MERGE (n:{label} {{key: row.key}})
ON CREATE SET n += row.identity, n.created_at = datetime($tx)
"""

# Current versions are read with their hash and times only: remainders are
# copied server-side (COPY_VERSIONS), so content never makes the round trip.
SLIM_PROJECTION = (
    "{hash: r.hash, valid_at: toString(r.valid_at), invalid_at: toString(r.invalid_at), "
    "created_at: toString(r.created_at), invalidated_at: toString(r.invalidated_at)}"
)

OPEN_IN_SCOPES = """
UNWIND $scopes AS scope
MATCH (a)-[r:{rel} {{scope: scope}}]->(b)
WHERE r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN labels(a)[0] AS src_label, a.key AS src, labels(b)[0] AS dst_label, b.key AS dst,
       r.hash AS hash, toString(r.valid_at) AS valid_at
"""

StateSlot = tuple[str, str]  # label, key
EdgeSlot = tuple[str, str, str, str, str]  # type, src label, src key, dst label, dst key


@dataclass(frozen=True, slots=True)
class OpenVersion:
    """The open, current version of a slot: its content hash and valid time (wire form)."""

    hash: str | None
    valid_at: str


@dataclass(frozen=True, slots=True)
class Closures:
    """What re-syncing some scopes closes, and how many open slots the scopes had."""

    states: list[Fact]
    edges: list[Fact]
    open_slots: int

    @property
    def fresh(self) -> bool:
        """No open fact in these scopes: their new facts may be written without reading."""
        return self.open_slots == 0


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one apply did: versions created, expired, closed in place; no-op facts."""

    facts: int
    created: int
    expired: int
    unchanged: int
    tx_time: datetime
    closed: int = 0


@dataclass(slots=True)
class _Batch:
    """A checked batch, grouped by slot, with node keys resolved."""

    states: dict[StateSlot, list[StateFact]]
    edges: dict[EdgeSlot, list[EdgeFact]]
    identities: dict[StateSlot, Mapping[str, Any]]


def _version(ref: str, props: Mapping[str, Any]) -> Version:
    values = decode_fact(props)
    return Version(
        hash=str(values.get("hash", "")),
        valid_at=values["valid_at"],
        invalid_at=values.get("invalid_at"),
        created_at=values["created_at"],
        expired_at=values.get("expired_at"),
        invalidated_at=values.get("invalidated_at"),
        ref=ref,
        payload={k: v for k, v in values.items() if k not in TIME_FIELDS},
    )


def _since(facts: Sequence[Fact]) -> str:
    """The earliest valid time any of a slot's changes touches."""
    return to_wire(min(aware(f.valid_at) for f in facts))


def _row(version: Version, **ends: str) -> dict[str, Any]:
    """One UNWIND row: content and bookkeeping, and the times as wire strings."""
    return {
        **ends,
        "props": {k: utc_values(v) for k, v in version.payload.items() if v is not None}
        if version.copy_of is None
        else None,
        "valid_at": to_wire(version.valid_at),
        "invalid_at": to_wire(version.invalid_at) if version.invalid_at is not None else None,
        "created_at": to_wire(version.created_at),
    }


def closing_facts(
    ontology: Ontology,
    open_now: Mapping[str, Iterable[tuple[str, str, str, str]]],
    facts: Iterable[Fact],
    at: datetime,
    repo: str,
) -> Closures:
    """Invalidations at ``at`` for every slot of ``open_now`` (per fact type) that
    ``facts`` do not assert again."""
    kept_states: set[tuple[str, str]] = set()
    kept_edges: set[tuple[str, str, str, str, str]] = set()
    for fact in facts:
        if isinstance(fact, StateFact):
            kept_states.add((fact.label, state_key(ontology, fact)))
        else:
            kept_edges.add((fact.type, fact.src.label, fact.src.key, fact.dst.label, fact.dst.key))
    states: list[Fact] = []
    edges: list[Fact] = []
    count = 0
    for rel, slots in open_now.items():
        for src_label, src, dst_label, dst in sorted(slots):
            count += 1
            if rel == STATE:
                if (src_label, src) not in kept_states:
                    states.append(StateFact.closing(src_label, src, at))
            elif (rel, src_label, src, dst_label, dst) not in kept_edges:
                edges.append(
                    EdgeFact(
                        rel,
                        NodeRef(src_label, src),
                        NodeRef(dst_label, dst),
                        repo,
                        None,
                        at,
                        change="invalidate",
                    )
                )
    return Closures(states, edges, count)


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

    def _apply(
        self,
        facts: Sequence[Fact],
        *,
        tx_time: datetime | None = None,
        fresh: bool = False,
    ) -> WriteResult:
        """Write already checked ``facts`` in one transaction.

        Internal to :mod:`strata.writers`: only a layer writer calls it, after it
        checked the facts against the ontology and its layer (the one-writer
        rule is enforced there, in one place). No layer module calls it; a
        writer's ``write_many`` runs several of these on a thread pool.

        Several facts for one slot apply in order. ``tx_time`` fixes the
        transaction time (tests, imports); by default it is the clock, never
        earlier than the newest version it touches.

        ``fresh`` is the caller's guarantee that no slot of these facts has a
        current version (its scopes were just found empty, under the writer's
        repository lock): nodes are merged but not locked, current versions are
        not read, and every edge must find both endpoints or the batch fails.
        """
        batch = self._group(facts)
        explicit = aware(tx_time, what="tx_time") if tx_time is not None else None
        return self._gateway.write_tx(
            lambda tx: self._apply_tx(tx, batch, len(facts), explicit, fresh=fresh), timeout=600
        )

    def open_slots(
        self, layer: Layer, scopes: Sequence[str], types: Sequence[str] | None = None
    ) -> dict[str, set[tuple[str, str, str, str]]]:
        """Per fact type of the layer, the slots with an open version in these scopes.

        A slot is (src label, src key, dst label, dst key); for STATE, src is dst.
        Writers use it to close what a re-synced scope no longer produces.
        ``types`` narrows the fact types read (one query each); by default every
        edge type of the layer, and STATE unless the layer owns no node label (a
        state found there would be another layer's, which this writer may not close).
        """
        return {
            rel: set(slots) for rel, slots in self.open_versions(layer, scopes, types).items()
        }

    def open_versions(
        self, layer: Layer, scopes: Sequence[str], types: Sequence[str] | None = None
    ) -> dict[str, dict[tuple[str, str, str, str], OpenVersion]]:
        """:meth:`open_slots` with each slot's open version (its content hash and
        valid time): what a re-sync compares its new facts against. One indexed
        read (the scope index) per fact type."""
        found: dict[str, dict[tuple[str, str, str, str], OpenVersion]] = {}
        if not scopes:
            return found
        if types is None:
            states = [STATE] if self._ontology.labels(layer) else []
            types = [*states, *self._ontology.edge_types(layer)]
        for rel in types:
            if rel != STATE and self._ontology.edge(rel).writer != "strata":
                continue
            rows = self._gateway.read(self._cypher(OPEN_IN_SCOPES, rel=rel), scopes=list(scopes))
            found[rel] = {
                (r["src_label"], r["src"], r["dst_label"], r["dst"]): OpenVersion(
                    r["hash"], r["valid_at"]
                )
                for r in rows
            }
        return found

    def closures(
        self,
        layer: Layer,
        scopes: Sequence[str],
        facts: Iterable[Fact],
        *,
        at: datetime,
        repo: str,
    ) -> Closures:
        """Invalidations at ``at`` for every open fact of ``scopes`` that ``facts`` lack.

        A writer that re-syncs a unit (a file, a document, a trace file) asserts
        what the unit now says and closes, with these, what it no longer says.
        """
        return closing_facts(self._ontology, self.open_slots(layer, scopes), facts, at, repo)

    def _group(self, facts: Sequence[Fact]) -> _Batch:
        states: dict[StateSlot, list[StateFact]] = defaultdict(list)
        edges: dict[EdgeSlot, list[EdgeFact]] = defaultdict(list)
        identities: dict[StateSlot, Mapping[str, Any]] = {}
        for fact in facts:
            if isinstance(fact, StateFact):
                slot = (fact.label, state_key(self._ontology, fact))
                states[slot].append(fact)
                identities.setdefault(slot, fact.identity)
            else:
                edges[
                    (fact.type, fact.src.label, fact.src.key, fact.dst.label, fact.dst.key)
                ].append(fact)
        return _Batch(dict(states), dict(edges), identities)

    # -- the transaction ---------------------------------------------------------------

    def _apply_tx(
        self,
        tx: Tx,
        batch: _Batch,
        count: int,
        explicit_tx: datetime | None,
        *,
        fresh: bool = False,
    ) -> WriteResult:
        stamp = explicit_tx or self._clock()
        if fresh:
            current: dict[tuple[str, ...], list[Version]] = {}
        else:
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
        if fresh:
            created = self._create_fresh(tx, batch, plans, stamp)
            return WriteResult(count, created, 0, unchanged, stamp)
        expired, closed, created = self._write(tx, plans, stamp, checked=True)
        return WriteResult(count, created, expired, unchanged, stamp, closed)

    def _create_fresh(
        self, tx: Tx, batch: _Batch, plans: Mapping[tuple[str, ...], Plan], stamp: datetime
    ) -> int:
        """Write a fresh batch without locks or reads: a state slot with one new version
        (the common case) merges its node and creates the version in one statement;
        any other slot has its node merged first and takes the ordinary create path."""
        merged: dict[str, list[dict[str, Any]]] = defaultdict(list)
        nodes: dict[str, list[dict[str, Any]]] = defaultdict(list)
        rest: dict[tuple[str, ...], Plan] = {}
        for slot, plan in plans.items():
            if len(slot) != 2:
                rest[slot] = plan
                continue
            label, key = slot
            identity = dict(batch.identities[(label, key)])
            single = len(plan.create) == 1 and plan.create[0].copy_of is None
            if single:
                merged[label].append({**_row(plan.create[0], key=key), "identity": identity})
            elif any(f.props is not None for f in batch.states[(label, key)]):
                nodes[label].append({"key": key, "identity": identity})
                rest[slot] = plan
            else:
                rest[slot] = plan
        for label in sorted(merged):
            text = self._cypher(MERGE_FRESH_STATE, label=label)
            tx.run(text, rows=merged[label], tx=to_wire(stamp))
        for label in sorted(nodes):
            tx.run(self._cypher(MERGE_FRESH, label=label), rows=nodes[label], tx=to_wire(stamp))
        return sum(len(rows) for rows in merged.values()) + self._create(tx, rest, checked=False)

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
            tx.run(self._cypher(MERGE_NODES, label=label), rows=rows, tx=to_wire(stamp))
        for label in sorted(lock_keys):
            tx.run(self._cypher(LOCK_NODES, label=label), keys=sorted(lock_keys[label]))
        # Lock every endpoint up front in one global order (label, key): creating a
        # relationship locks both of its nodes, and taking those locks in row order
        # would let concurrent batches deadlock.
        src_keys: dict[str, set[str]] = defaultdict(set)
        dst_keys: dict[str, set[str]] = defaultdict(set)
        for _, src_label, src_key, dst_label, dst_key in batch.edges:
            src_keys[src_label].add(src_key)
            dst_keys[dst_label].add(dst_key)
        missing: list[str] = []
        for label in sorted(set(src_keys) | set(dst_keys)):
            wanted = src_keys.get(label, set()) | dst_keys.get(label, set())
            found = tx.run(self._cypher(LOCK_NODES, label=label), keys=sorted(wanted))
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
        by_label: dict[str, list[dict[str, str]]] = defaultdict(list)
        for (label, key), state_facts in batch.states.items():
            by_label[label].append({"key": key, "since": _since(state_facts)})
        for label, slots in by_label.items():
            for row in tx.run(self._cypher(CURRENT_STATE, label=label), slots=slots):
                current[(label, row["key"])].append(_version(row["ref"], row["props"]))
        by_type: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
        for (rel, src_label, src_key, dst_label, dst_key), edge_facts in batch.edges.items():
            by_type[(rel, src_label, dst_label)].append(
                {"src": src_key, "dst": dst_key, "since": _since(edge_facts)}
            )
        for (rel, src_label, dst_label), slots in by_type.items():
            text = self._cypher(CURRENT_EDGES, rel=rel, src=src_label, dst=dst_label)
            for row in tx.run(text, slots=slots):
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
            before = plan.size()
            versions, plan = plan_set(
                versions,
                content=digest,
                payload=payload,
                start=fact.valid_at,
                end=fact.invalid_at,
                tx=stamp,
                plan=plan,
            )
            if plan.size() == before:
                unchanged += 1
        return plan, unchanged

    def _write(
        self,
        tx: Tx,
        plans: Mapping[tuple[str, ...], Plan],
        stamp: datetime,
        *,
        checked: bool = True,
    ) -> tuple[int, int, int]:
        """Expire, close in place, then create; returns (expired, closed, created)."""
        expired, closed = self._retire(tx, plans, stamp)
        return expired, closed, self._create(tx, plans, checked=checked)

    def _retire(
        self, tx: Tx, plans: Mapping[tuple[str, ...], Plan], stamp: datetime
    ) -> tuple[int, int]:
        refs = [v.ref for plan in plans.values() for v in plan.expire if v.ref is not None]
        if refs:
            row = tx.run_one(EXPIRE, refs=refs, tx=to_wire(stamp))
            done = int(row["expired"]) if row else 0
            if done != len(refs):
                raise TransientDatabaseError(
                    f"concurrent write: expected to expire {len(refs)} versions, expired {done}"
                )
        closes = [
            {"ref": v.ref, "invalid_at": to_wire(v.invalid_at)}
            for plan in plans.values()
            for v in plan.close
            if v.ref is not None and v.invalid_at is not None
        ]
        if closes:
            row = tx.run_one(CLOSE, rows=closes, tx=to_wire(stamp))
            done = int(row["closed"]) if row else 0
            if done != len(closes):
                raise TransientDatabaseError(
                    f"concurrent write: expected to close {len(closes)} versions, closed {done}"
                )
        return len(refs), len(closes)

    def _create(self, tx: Tx, plans: Mapping[tuple[str, ...], Plan], *, checked: bool) -> int:
        state_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        edge_rows: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        copy_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        created = 0
        for slot, plan in plans.items():
            rel = STATE if len(slot) == 2 else slot[0]
            for version in plan.create:
                created += 1
                if version.copy_of is not None:
                    copy_rows[rel].append(_row(version, copy_of=version.copy_of))
                elif len(slot) == 2:
                    state_rows[slot[0]].append(_row(version, key=slot[1]))
                else:
                    _, src_label, src_key, dst_label, dst_key = slot
                    edge_rows[(rel, src_label, dst_label)].append(
                        _row(version, src=src_key, dst=dst_key)
                    )
        for rel, rows in copy_rows.items():
            tx.run(self._cypher(COPY_VERSIONS, rel=rel), rows=rows)
        for label, rows in state_rows.items():
            tx.run(self._cypher(CREATE_STATE, label=label), rows=rows)
        for (rel, src_label, dst_label), rows in edge_rows.items():
            answer = tx.run_one(
                self._cypher(CREATE_EDGES, rel=rel, src=src_label, dst=dst_label), rows=rows
            )
            made = int(answer["created"]) if answer else 0
            if not checked and made != len(rows):
                raise OntologyViolation(
                    f"{len(rows) - made} {rel} edge(s) found no endpoint; nothing was written",
                    rule="missing_endpoint",
                )
        return created

    def _cypher(self, template: str, **names: str) -> str:
        """Fill label and type slots after whitelisting them against the ontology."""
        filled: dict[str, str] = {"projection": SLIM_PROJECTION}
        for slot, name in names.items():
            if slot == "rel":
                if name != STATE:
                    self._ontology.edge(name)
                filled[slot] = checked_rel_type(name)
            else:
                self._ontology.node(name)
                filled[slot] = checked_label(name)
        return template.format(**filled)

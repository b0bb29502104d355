"""The bitemporal fact store: checked, batched, locked writes through the gateway.

Only the layer writers (:mod:`strata.writers`) write through it: a writer
checks every fact against the ontology and its layer (the whole write is
refused on any violation; nothing is written), then hands the batch to
:meth:`FactStore._apply`, which is one write transaction:

1. the batch is grouped by slot, node keys resolved;
2. per label, one statement merges the state slots' nodes by key, locks them
   (``SET _lock`` then ``REMOVE``: Neo4j's documented way to take a write lock
   before reading) and reads their current versions under the lock; edge
   endpoints are locked, then the current edge versions read, one statement
   per edge type;
3. :func:`strata.temporal.plan_set` plans the changes in Python;
4. expirations and new versions are written with ``UNWIND $rows``, new state
   versions on the nodes step 2 locked (by element id, no second key lookup).

The statements live in :mod:`strata.graph.statements`, the re-sync closures in
:mod:`strata.graph.closures`.

Labels and relationship types reach Cypher only after the ontology declared
them and the gateway's identifier checks passed; every value is a parameter.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from strata.errors import OntologyViolation, TransientDatabaseError
from strata.facts import EdgeFact, Fact, StateFact
from strata.graph.closures import Closures, OpenVersion, closing_facts
from strata.graph.gateway import Gateway, Tx, checked_label, checked_rel_type
from strata.graph.rehearsal import rehearsal_rounds
from strata.graph.rows import (
    CreationRows,
    EdgeSlot,
    StateSlot,
    slot_since,
    version_of,
    version_row,
)
from strata.graph.statements import (
    CLOSE,
    COPY_VERSIONS,
    CREATE_EDGES,
    CREATE_STATE,
    CREATE_STATE_AT,
    CURRENT_EDGES,
    EXPIRE,
    LOCK_NODES,
    LOCK_READ,
    MERGE_FRESH,
    MERGE_FRESH_STATE,
    MERGE_LOCK_READ,
    OPEN_IN_SCOPES,
    RETRACT_IN_SCOPES,
    SLIM_PROJECTION,
)
from strata.ontology.model import STATE, Layer, Ontology
from strata.temporal import Plan, Version, aware, content_hash, now, plan_set, to_wire

# Up to this many scopes (a push's files), a re-sync reads the open versions of every
# fact type in one statement (UNION ALL); above it, one type at a time, so a full
# re-sync of a large repository never holds all its rows at once.
ONE_READ_MAX_SCOPES = 256
NO_SCOPE = "\x00"  # no scope is empty or starts with NUL: warming reads read nothing


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
        return {rel: set(slots) for rel, slots in self.open_versions(layer, scopes, types).items()}

    def open_versions(
        self, layer: Layer, scopes: Sequence[str], types: Sequence[str] | None = None
    ) -> dict[str, dict[tuple[str, str, str, str], OpenVersion]]:
        """:meth:`open_slots` with each slot's open version (its content hash and
        valid time): what a re-sync compares its new facts against. An indexed read
        (the scope index) per fact type, all in one statement for a push's few scopes."""
        found: dict[str, dict[tuple[str, str, str, str], OpenVersion]] = {}
        if not scopes:
            return found
        if types is None:
            types = self._ontology.fact_types(layer)
        rels = [r for r in types if r == STATE or self._ontology.edge(r).writer == "strata"]
        found.update((rel, {}) for rel in rels)
        reads = [self._cypher(OPEN_IN_SCOPES, rel=rel) for rel in rels]
        if rels and len(scopes) <= ONE_READ_MAX_SCOPES:
            # A push's few files: every type in one round trip instead of one each.
            reads = ["\nUNION ALL\n".join(reads)]
        # Above the bound, one type at a time: a large set's rows are never all held at once.
        for text in reads:
            for r in self._gateway.read(text, scopes=list(scopes)):
                slot = (r["src_label"], r["src"], r["dst_label"], r["dst"])
                found[r["rel"]][slot] = OpenVersion(r["hash"], r["valid_at"])
        return found

    def rehearse_writes(self, layer: Layer) -> None:
        """Have Neo4j plan every statement a push's write of ``layer`` can run, now
        (:mod:`strata.graph.rehearsal`): the write path runs on made-up slots in a
        transaction that is rolled back. Nothing is written."""
        at = self._clock()

        def work(tx: Tx) -> None:
            for step, facts in enumerate(rehearsal_rounds(self._ontology, layer, at)):
                stamp = at + timedelta(milliseconds=step)  # each round later than the last
                self._apply_tx(tx, self._group(facts), len(facts), stamp)

        self._gateway.rehearse(work, timeout=60)

    def now(self) -> datetime:
        """The store's clock: a transaction time no later than any write that follows."""
        return self._clock()

    def _retract(
        self, layer: Layer, scopes: Sequence[str], since: datetime, *, chunk: int = 200
    ) -> int:
        """Stop believing the layer's versions recorded in ``scopes`` since ``since``
        that are still believed (their ``expired_at`` set to now): a failed write's
        facts, taken back. Nothing is deleted; as of a known time inside the window
        they still read. Internal to :mod:`strata.writers` (the layer is its own).

        ``chunk`` scopes per transaction, each idempotent: a retraction that stops
        halfway is finished by running it again. Answers how many versions it retracted.
        """
        labels = sorted(self._ontology.labels(layer))
        rels = self._ontology.fact_types(layer)
        statements = [(self._cypher(RETRACT_IN_SCOPES, rel=rel), rel) for rel in rels]
        since_wire, tx = to_wire(aware(since, what="since")), to_wire(self._clock())
        retracted = 0
        ordered = sorted(set(scopes))
        for start in range(0, len(ordered), chunk):
            part = ordered[start : start + chunk]

            def work(tx_: Tx, part: list[str] = part) -> int:
                return sum(
                    tx_.run(
                        text,
                        scopes=part,
                        since=since_wire,
                        tx=tx,
                        labels=labels if rel == STATE else None,
                    )[0]["retracted"]
                    for text, rel in statements
                )

            retracted += self._gateway.write_tx(work, timeout=600)
        return retracted

    def warm_open_reads(self, layer: Layer) -> None:
        """Have Neo4j plan the reads of a push's few scopes now (0.2-0.3 s, again
        after a large write moved its statistics); a scope no fact has reads nothing."""
        for types in (None, [STATE]):  # a re-sync's every type; a plan's open files
            self.open_versions(layer, [NO_SCOPE], types)

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
        """Group checked ``facts`` by slot. The writer checked every identity before
        the batch got here, so keys are composed without checking them again."""
        states: dict[StateSlot, list[StateFact]] = defaultdict(list)
        edges: dict[EdgeSlot, list[EdgeFact]] = defaultdict(list)
        identities: dict[StateSlot, Mapping[str, Any]] = {}
        for fact in facts:
            if isinstance(fact, StateFact):
                key = fact.key
                if key is None:
                    key = self._ontology.node(fact.label).make_key(fact.identity)
                slot = (fact.label, key)
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
        nodes: dict[StateSlot, str] = {}
        if fresh:
            current: dict[tuple[str, ...], list[Version]] = {}
        else:
            current = self._lock_and_read_states(tx, batch, stamp, nodes)
            self._lock_endpoints(tx, batch)
            self._read_current_edges(tx, batch, current)
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
        expired, closed = self._retire(tx, plans, stamp)
        created = self._create(tx, plans, checked=True, nodes=nodes)
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
                merged[label].append({**version_row(plan.create[0], key=key), "identity": identity})
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

    def _lock_and_read_states(
        self, tx: Tx, batch: _Batch, stamp: datetime, nodes: dict[StateSlot, str]
    ) -> dict[tuple[str, ...], list[Version]]:
        """Merge and lock every state slot's node, reading its current versions under
        the lock (one statement per label and kind); fills ``nodes`` with the element
        id of each node found or created."""
        merge_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        lock_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for (label, key), state_facts in batch.states.items():
            row: dict[str, Any] = {"key": key, "since": slot_since(state_facts)}
            if any(f.props is not None for f in state_facts):
                row["identity"] = dict(batch.identities[(label, key)])
                merge_rows[label].append(row)
            else:
                lock_rows[label].append(row)
        current: dict[tuple[str, ...], list[Version]] = defaultdict(list)
        # Nodes are locked in one order (label, key) so concurrent batches cannot deadlock.
        for template, by_label in ((MERGE_LOCK_READ, merge_rows), (LOCK_READ, lock_rows)):
            for label in sorted(by_label):
                rows = sorted(by_label[label], key=lambda r: r["key"])
                text = self._cypher(template, label=label)
                for found in tx.run(text, rows=rows, tx=to_wire(stamp)):
                    slot = (label, found["key"])
                    nodes[slot] = found["node"]
                    if found["ref"] is not None:
                        current[slot].append(version_of(found["ref"], found["props"]))
        return current

    def _lock_endpoints(self, tx: Tx, batch: _Batch) -> None:
        """Lock every edge endpoint up front in one global order (label, key): creating
        a relationship locks both of its nodes, and taking those locks in row order
        would let concurrent batches deadlock. A missing endpoint refuses the batch."""
        wanted: dict[str, set[str]] = defaultdict(set)
        for _, src_label, src_key, dst_label, dst_key in batch.edges:
            wanted[src_label].add(src_key)
            wanted[dst_label].add(dst_key)
        missing: list[str] = []
        for label in sorted(wanted):
            found = tx.run(self._cypher(LOCK_NODES, label=label), keys=sorted(wanted[label]))
            missing.extend(
                f"{label} {k!r}" for k in sorted(wanted[label] - {r["key"] for r in found})
            )
        if missing:
            shown = ", ".join(missing[:20]) + (
                f" and {len(missing) - 20} more" if len(missing) > 20 else ""
            )
            raise OntologyViolation(
                f"edge endpoints do not exist: {shown}; nothing was written",
                rule="missing_endpoint",
                missing=missing[:200],
            )

    def _read_current_edges(
        self, tx: Tx, batch: _Batch, current: dict[tuple[str, ...], list[Version]]
    ) -> None:
        by_type: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
        for (rel, src_label, src_key, dst_label, dst_key), edge_facts in batch.edges.items():
            by_type[(rel, src_label, dst_label)].append(
                {"src": src_key, "dst": dst_key, "since": slot_since(edge_facts)}
            )
        for (rel, src_label, dst_label), slots in by_type.items():
            text = self._cypher(CURRENT_EDGES, rel=rel, src=src_label, dst=dst_label)
            for row in tx.run(text, slots=slots):
                slot = (rel, src_label, row["src"], dst_label, row["dst"])
                current[slot].append(version_of(row["ref"], row["props"]))

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

    def _create(
        self,
        tx: Tx,
        plans: Mapping[tuple[str, ...], Plan],
        *,
        checked: bool,
        nodes: Mapping[StateSlot, str] | None = None,
    ) -> int:
        """Create the planned versions (see :meth:`CreationRows.of`). Unless ``checked``
        (the endpoints were locked and found), an edge that finds no endpoint fails
        the batch."""
        rows = CreationRows.of(plans, nodes or {})
        for rel, copies in rows.copies.items():
            tx.run(self._cypher(COPY_VERSIONS, rel=rel), rows=copies)
        if rows.at_nodes:
            answer = tx.run_one(CREATE_STATE_AT, rows=rows.at_nodes)
            if answer is None or int(answer["created"]) != len(rows.at_nodes):
                raise TransientDatabaseError("concurrent write: a locked node vanished")
        for label, states in rows.states.items():
            tx.run(self._cypher(CREATE_STATE, label=label), rows=states)
        for (rel, src_label, dst_label), edges in rows.edges.items():
            answer = tx.run_one(
                self._cypher(CREATE_EDGES, rel=rel, src=src_label, dst=dst_label), rows=edges
            )
            made = int(answer["created"]) if answer else 0
            if not checked and made != len(edges):
                raise OntologyViolation(
                    f"{len(edges) - made} {rel} edge(s) found no endpoint; nothing was written",
                    rule="missing_endpoint",
                )
        return rows.count

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

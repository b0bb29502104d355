"""Model-based test of the bitemporal store against the real Neo4j.

Hypothesis drives random sequences of assert / invalidate / correct, with
overlapping, back-dated and same-instant times, against the real store and
against a deliberately naive reference model written here: for each slot, a
list of (transaction time, belief) snapshots, where a belief is a list of
valid-time segments. The two must agree on every as-of read and on history.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from strata.facts import EdgeFact, Fact, NodeRef, StateFact
from strata.graph.gateway import Gateway
from strata.graph.reads import FactVersion, Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology, load_ontology
from strata.settings import Settings
from strata.temporal import AsOf
from strata.writers import CodeWriter

DAY0 = datetime(2025, 1, 1, tzinfo=UTC)
CONTENTS = ("x", "y", "z")
SLOTS = ("a", "b", "calls")  # two symbol states and one edge a -> b

Segment = tuple[datetime, datetime | None, str]


def day(n: int) -> datetime:
    return DAY0 + timedelta(days=n)


def apply_to_belief(
    belief: list[Segment], content: str | None, start: datetime, end: datetime | None
) -> list[Segment]:
    """The naive reference: cut [start, end) out of every segment, then add the new one."""
    out: list[Segment] = []
    for s, e, c in belief:
        disjoint = (e is not None and e <= start) or (end is not None and s >= end)
        if disjoint:
            out.append((s, e, c))
            continue
        if s < start:
            out.append((s, start, c))
        if end is not None and (e is None or e > end):
            out.append((end, e, c))
    if content is not None:
        out.append((start, end, content))
    return sorted(out, key=lambda seg: seg[0])


def evaluate(segments: list[Segment], at: datetime) -> list[str]:
    return [c for s, e, c in segments if s <= at and (e is None or at < e)]


class Reference:
    """Per slot: snapshots of belief, in transaction-time order."""

    def __init__(self) -> None:
        self.snapshots: dict[str, list[tuple[datetime, list[Segment]]]] = {s: [] for s in SLOTS}

    def change(
        self, slot: str, tx: datetime, content: str | None, start: datetime, end: datetime | None
    ) -> None:
        history = self.snapshots[slot]
        belief = history[-1][1] if history else []
        history.append((tx, apply_to_belief(belief, content, start, end)))

    def belief(self, slot: str, known_at: datetime) -> list[Segment]:
        found: list[Segment] = []
        for tx, belief in self.snapshots[slot]:
            if tx <= known_at:
                found = belief
        return found

    def as_of(self, slot: str, valid_at: datetime, known_at: datetime) -> str | None:
        values = evaluate(self.belief(slot, known_at), valid_at)
        assert len(values) <= 1
        return values[0] if values else None


class BitemporalMachine(RuleBasedStateMachine):
    store: FactStore
    reads: Reads
    ontology: Ontology

    def __init__(self) -> None:
        super().__init__()
        self.repo = f"model-{uuid.uuid4().hex[:10]}"
        self.model = Reference()
        self.tx = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=uuid.uuid4().int % 10_000)
        self.tx_times: list[datetime] = []

    # -- helpers ------------------------------------------------------------------------

    def identity(self, name: str) -> dict[str, Any]:
        return {"repo": self.repo, "ref": "main", "path": "m.py", "qualname": name, "name": name}

    def ref(self, name: str) -> NodeRef:
        return NodeRef("Symbol", self.ontology.node("Symbol").make_key(self.identity(name)))

    def fact(
        self, slot: str, content: str | None, start: datetime, end: datetime | None, change: Any
    ) -> Fact:
        if slot == "calls":
            props = (
                None
                if content is None
                else {
                    "line": CONTENTS.index(content) + 1,
                    "confidence": 1.0,
                    "resolution": "local",
                }
            )
            return EdgeFact(
                "CALLS", self.ref("a"), self.ref("b"), self.repo, props, start, end, change
            )
        state = (
            None
            if content is None
            else {
                "kind": "function",
                "qualified_name": f"m.{slot}",
                "line_start": 1,
                "line_end": 2,
                "body_hash": content,
                "language": "python",
            }
        )
        return StateFact("Symbol", self.identity(slot), state, start, end, change)

    def advance(self, same_instant: bool, millis: int) -> datetime:
        if not same_instant or not self.tx_times:
            self.tx = self.tx + timedelta(milliseconds=millis)
        self.tx_times.append(self.tx)
        return self.tx

    def write(
        self,
        slot: str,
        content: str | None,
        start: datetime,
        end: datetime | None,
        change: Any,
        tx: datetime,
    ) -> None:
        CodeWriter(self.store).write([self.fact(slot, content, start, end, change)], tx_time=tx)
        self.model.change(slot, tx, content, start, end)

    def content_from_store(self, slot: str, as_of: AsOf) -> str | None:
        if slot == "calls":
            history = self.reads.edge_history(
                "CALLS", "Symbol", self.ref("a").key, "Symbol", self.ref("b").key
            )
            visible = [v for v in history if _visible(v, as_of)]
            assert len(visible) <= 1, visible
            return CONTENTS[visible[0].props["line"] - 1] if visible else None
        state = self.reads.node_state("Symbol", self.ref(slot).key, as_of)
        return None if state is None else str(state.state.props["body_hash"])

    # -- rules ---------------------------------------------------------------------------

    @initialize()
    def create_endpoints(self) -> None:
        """Both symbols exist from day 0, so the edge slot always has its endpoints."""
        tx = self.advance(False, 1)
        for slot in ("a", "b"):
            self.write(slot, "x", day(0), None, "assert", tx)

    @rule(
        slot=st.sampled_from(SLOTS),
        content=st.sampled_from(CONTENTS),
        start=st.integers(0, 12),
        length=st.one_of(st.none(), st.integers(1, 6)),
        same_instant=st.booleans(),
        millis=st.integers(1, 5000),
    )
    def assert_fact(
        self,
        slot: str,
        content: str,
        start: int,
        length: int | None,
        same_instant: bool,
        millis: int,
    ) -> None:
        end = None if length is None else day(start + length)
        self.write(slot, content, day(start), end, "assert", self.advance(same_instant, millis))

    @rule(
        slot=st.sampled_from(SLOTS),
        at=st.integers(0, 14),
        same_instant=st.booleans(),
        millis=st.integers(1, 5000),
    )
    def invalidate(self, slot: str, at: int, same_instant: bool, millis: int) -> None:
        self.write(slot, None, day(at), None, "invalidate", self.advance(same_instant, millis))

    @rule(
        slot=st.sampled_from(SLOTS),
        content=st.one_of(st.none(), st.sampled_from(CONTENTS)),
        start=st.integers(-3, 12),
        length=st.one_of(st.none(), st.integers(1, 8)),
        same_instant=st.booleans(),
        millis=st.integers(1, 5000),
    )
    def correct(
        self,
        slot: str,
        content: str | None,
        start: int,
        length: int | None,
        same_instant: bool,
        millis: int,
    ) -> None:
        """A back-dated correction (possibly that the fact never held)."""
        end = None if length is None else day(start + length)
        self.write(slot, content, day(start), end, "correct", self.advance(same_instant, millis))

    @rule(
        slot=st.sampled_from(SLOTS),
        valid=st.integers(-4, 20),
        valid_hours=st.sampled_from((0, 0, 12)),
        known_index=st.integers(0, 1000),
        known_shift=st.sampled_from((-1, 0, 0, 1)),
    )
    def as_of_agrees(
        self, slot: str, valid: int, valid_hours: int, known_index: int, known_shift: int
    ) -> None:
        """A random (valid time, known time) read agrees with the model."""
        known = self.tx_times[known_index % len(self.tx_times)] + timedelta(
            microseconds=known_shift
        )
        valid_at = day(valid) + timedelta(hours=valid_hours)
        as_of = AsOf.at(valid_at, known)
        assert self.content_from_store(slot, as_of) == self.model.as_of(slot, valid_at, known)

    @invariant()
    def now_agrees(self) -> None:
        """As of now (both axes far ahead), store and model agree on every slot."""
        far = AsOf.at(day(40), self.tx + timedelta(days=1))
        for slot in SLOTS:
            expected = self.model.as_of(slot, far.valid_at, far.known_at)
            assert self.content_from_store(slot, far) == expected

    def teardown(self) -> None:
        """history() reconstructs the model's belief at every transaction time."""
        if not self.tx_times:
            return
        for slot in SLOTS:
            history = self._history(slot)
            for v in history:
                assert v.expired_at is None or v.expired_at > v.created_at
            for tx in sorted(set(self.tx_times)):
                believed = [
                    v
                    for v in history
                    if v.created_at <= tx and (v.expired_at is None or v.expired_at > tx)
                ]
                segments = [
                    (v.valid_at, _known_end(v, tx), self._content(slot, v)) for v in believed
                ]
                expected = self.model.belief(slot, tx)
                probes = {s for s, _, _ in segments + expected} | {
                    e for _, e, _ in segments + expected if e is not None
                }
                probes.add(day(-30))
                for probe in probes:
                    got = evaluate(segments, probe)
                    assert len(got) <= 1, f"overlapping versions at {probe}: {believed}"
                    assert got == evaluate(expected, probe), (slot, tx, probe)

    def _history(self, slot: str) -> list[FactVersion]:
        if slot == "calls":
            return self.reads.edge_history(
                "CALLS", "Symbol", self.ref("a").key, "Symbol", self.ref("b").key
            )
        return self.reads.state_history("Symbol", self.ref(slot).key)

    @staticmethod
    def _content(slot: str, version: FactVersion) -> str:
        if slot == "calls":
            return CONTENTS[version.props["line"] - 1]
        return str(version.props["body_hash"])


def _known_end(v: FactVersion, known_at: datetime) -> datetime | None:
    """The valid-time end Strata believed at ``known_at`` (a close in place counts from then)."""
    if v.invalidated_at is not None and v.invalidated_at > known_at:
        return None
    return v.invalid_at


def _visible(v: FactVersion, as_of: AsOf) -> bool:
    end = _known_end(v, as_of.known_at)
    return (
        v.valid_at <= as_of.valid_at
        and (end is None or end > as_of.valid_at)
        and v.created_at <= as_of.known_at
        and (v.expired_at is None or v.expired_at > as_of.known_at)
    )


@pytest.mark.timeout(1500)
def test_store_agrees_with_reference_model(gateway: Gateway, settings_: Settings) -> None:
    """Random assert / invalidate / correct sequences: as-of reads and history agree."""
    ontology = load_ontology(settings_.ontology_dir)
    BitemporalMachine.ontology = ontology
    BitemporalMachine.store = FactStore(gateway, ontology)
    BitemporalMachine.reads = Reads(gateway, ontology)
    run_state_machine_as_test(
        BitemporalMachine,
        settings=settings(
            max_examples=120,
            stateful_step_count=30,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


@pytest.fixture
def settings_(settings: Settings) -> Settings:
    return settings

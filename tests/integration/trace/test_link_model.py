"""Model-based test of link status changes against the real store.

Hypothesis drives random sequences of a declared link's life (PROPOSED,
VALIDATED, STALE, removed from its file, declared again), each step at a later
commit time and a later transaction time, through the trace layer's own
:func:`strata.trace.reconcile.reconcile` and the real Neo4j. A naive reference
written here says what every (valid, known) read must answer: a link's first
declaration counts from its origin (its commit's time), STALE from when the
target vanished, every later change from the commit that made it; what was
true in a period stays readable as of that period.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strata.facts import NodeRef, Source, StateFact
from strata.graph.gateway import Gateway
from strata.graph.store import FactStore
from strata.ontology import Ontology, load_ontology
from strata.settings import Settings
from strata.temporal import AsOf, now
from strata.trace.link import Link
from strata.trace.reads import TraceReads
from strata.trace.reconcile import ended_slots, open_links, reconcile
from strata.writers import CodeWriter, KnowledgeWriter, TraceWriter

ORIGIN = datetime(2025, 1, 1, tzinfo=UTC)
STATES = ("PROPOSED", "VALIDATED", "STALE", None)  # None: removed from the trace file

Step = tuple[int, str | None]  # days after the previous step, state


def reference(steps: list[tuple[datetime, str | None]], known: int, valid: datetime) -> str | None:
    """The status as of ``valid`` after the first ``known`` steps were recorded."""
    effective: list[tuple[datetime, str | None]] = []
    present = False
    ever = False
    for at, state in steps[:known]:
        if state is None:
            if present:
                effective.append((at, None))
            present = False
            continue
        # Only the first declaration counts from its origin (STALE: from when it vanished).
        start = ORIGIN if not ever and state != "STALE" else at
        if present and effective and effective[-1][1] == state:
            continue  # nothing changed
        effective.append((start, state))
        present = ever = True
    answer = None
    for start, state in effective:
        if start <= valid:
            answer = state
    return answer


def endpoints(store: FactStore, ontology: Ontology, repo: str) -> tuple[NodeRef, NodeRef]:
    req_identity = {"repo": repo, "req_id": "REQ-001"}
    KnowledgeWriter(store).write(
        [
            StateFact(
                "Requirement",
                req_identity,
                {"text": "The shop shall save.", "ears": "ubiquitous", "path": "r.md", "line": 1},
                ORIGIN,
            )
        ]
    )
    sym_identity = {"repo": repo, "ref": "main", "path": "a.py", "qualname": "f", "name": "f"}
    CodeWriter(store).write(
        [
            StateFact(
                "Symbol",
                sym_identity,
                {
                    "kind": "function",
                    "qualified_name": "a.f",
                    "line_start": 1,
                    "line_end": 2,
                    "body_hash": "h",
                    "language": "python",
                },
                ORIGIN,
            )
        ]
    )
    return (
        NodeRef("Requirement", ontology.node("Requirement").make_key(req_identity)),
        NodeRef("Symbol", ontology.node("Symbol").make_key(sym_identity)),
    )


@pytest.mark.timeout(900)
def test_status_changes_agree_with_reference(gateway: Gateway, settings: Settings) -> None:
    ontology = load_ontology(settings.ontology_dir)
    store = FactStore(gateway, ontology)
    reads = TraceReads(gateway)

    @settings_for_links
    @given(st.lists(st.tuples(st.integers(1, 3), st.sampled_from(STATES)), min_size=1, max_size=7))
    def run(plan: list[Step]) -> None:
        repo = f"model-{uuid.uuid4().hex[:10]}"
        req, sym = endpoints(store, ontology, repo)
        scope = f"{repo}|trace|trace/x.yml"
        tx0 = now() + timedelta(days=1)
        steps: list[tuple[datetime, str | None]] = []
        at = ORIGIN
        for index, (days, state) in enumerate(plan):
            at = at + timedelta(days=days)
            steps.append((at, state))
            settled = []
            if state is not None:
                props = {"status": state, "confidence": 1.0, "methods": ["m"], "commit": "c" * 40}
                start = at if state == "STALE" else ORIGIN
                settled.append(
                    Link("IMPLEMENTED_BY", req, sym, props, start, scope, Source(commit="c" * 40))
                )
            current = open_links(gateway, repo)
            ended = ended_slots(gateway, settled, current)
            facts, _ = reconcile(repo, settled, current, {scope}, at=at, ended=ended)
            if facts:
                TraceWriter(store).write(facts, tx_time=tx0 + timedelta(minutes=index))
        valid_times = sorted(
            {ORIGIN - timedelta(days=1), ORIGIN}
            | {a for a, _ in steps}
            | {a + timedelta(hours=12) for a, _ in steps}
        )
        wrong = []
        for known in range(len(steps) + 1):
            known_at = tx0 + timedelta(minutes=known - 1, seconds=30)
            for valid in valid_times:
                links = reads.links_from(req.key, AsOf.at(valid, known_at))
                got = links[0].link["status"] if links else None
                want = reference(steps, known, valid)
                if got != want:
                    wrong.append((known, valid.date(), got, want))
        assert wrong == [], (plan, wrong)

    run()


settings_for_links = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

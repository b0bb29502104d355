"""Facts that walk a layer's whole write path, for a transaction that is rolled back.

Neo4j plans a statement the first time it runs, and again once a large write has
moved its statistics (a first index of a large repository). Those plans were paid
inside the next push's write: on the Django sdist the first push after a full index
wrote in 0.22 s where later pushes took 0.04-0.07 s. :meth:`FactStore.rehearse_writes`
runs these facts through the store's own write path in a transaction it rolls back,
so every statement a push can run (per label, per edge type and endpoint labels)
is planned ahead and nothing lands.

Three rounds, as a push's re-sync meets them: new slots (nodes merged, versions
created), the same slots changed (states closed at a later time, edges replaced at
the same time: expired), then closed (facts without content, named by key); each
with one slot per label and edge, then with two (Neo4j plans per list size class).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from strata.facts import EdgeFact, Fact, NodeRef, StateFact
from strata.ontology.model import STATE, Layer, Ontology

# Every identity field of a rehearsal node holds this: no real key starts with NUL.
REHEARSAL = "\x00rehearsal"


def rehearsal_rounds(ontology: Ontology, layer: Layer, at: datetime) -> list[list[Fact]]:
    """The rounds of facts for every label and strata-written edge type (with each
    pair of endpoint labels) of ``layer``; nodes and versions start at ``at``.

    Neo4j keeps a plan per size class of a list parameter (1, 2-10, 11-100, ...: a
    statement with 1 row and the same with 2 rows are planned apart), so the rounds
    run once with one slot per label and edge, then again with two (a push's
    statements mostly carry 1 to 10 rows)."""
    rounds: list[list[Fact]] = []
    for width in (1, 2):
        rounds.extend(_rounds(ontology, layer, at, width))
    return rounds


def _rounds(ontology: Ontology, layer: Layer, at: datetime, width: int) -> list[list[Fact]]:
    later = at + timedelta(seconds=1)
    keys: dict[str, list[str]] = {}
    created: list[Fact] = []
    changed: list[Fact] = []
    closed: list[Fact] = []
    for label in ontology.labels(layer):
        node = ontology.node(label)
        keys[label] = []
        for n in range(width):
            identity = {spec.name: f"{REHEARSAL}{width}.{n}" for spec in node.identity}
            identity.setdefault("repo", REHEARSAL)  # the store reads a state's repo
            key = node.make_key(identity)
            keys[label].append(key)
            created.append(StateFact(label, identity, {"rehearsal": 1}, at, scope=REHEARSAL))
            changed.append(StateFact(label, identity, {"rehearsal": 2}, later, scope=REHEARSAL))
            closed.append(StateFact.closing(label, key, later + timedelta(seconds=1)))
    for rel in ontology.fact_types(layer):
        if rel == STATE:
            continue  # the states above
        edge = ontology.edge(rel)
        for src in edge.from_labels:
            for dst in edge.to_labels:
                if src not in keys or dst not in keys:
                    continue  # an endpoint of another layer: not this writer's to rehearse
                for a, b in zip(keys[src], keys[dst], strict=True):
                    ends = (NodeRef(src, a), NodeRef(dst, b))
                    created.append(EdgeFact(rel, *ends, REHEARSAL, {"rehearsal": 1}, at))
                    changed.append(EdgeFact(rel, *ends, REHEARSAL, {"rehearsal": 2}, at))
                    closed.append(EdgeFact(rel, *ends, REHEARSAL, None, later))
    return [created, changed, closed]

"""A first index's files written while the rest of the run still resolves.

Resolving is one core of Python and writing mostly Neo4j's work, so written one
after the other, each left a core idle: on Django, 7-11 s of resolving, then
17-22 s of writing. When the files about to be written hold nothing open in the
graph (a ref indexed for the first time), each file's own facts (its states and
the edges between its own nodes: DEFINES, CONTAINS, calls inside the file) are
sent as soon as the file is resolved, in batches of whole files, so an edge
never waits on a node of another batch. What refers to other files' nodes (a
call into another module, an import of a shared Module node) waits for the
end, where :class:`strata.code.sync.Sync` writes it after every streamed batch
has committed, in the usual order.

The files are noted as pending before the first batch (:mod:`strata.code.pending`).
A run that fails takes back what it streamed (:meth:`strata.code.sync.Sync.retract`:
the versions' belief ends, nothing is deleted) and drops the note; a run killed
before it could leaves the note, and the next run re-syncs the files.
"""

from __future__ import annotations

import sys

from strata.facts import EdgeFact, Fact, StateFact, state_key
from strata.graph.store import FactStore, WriteResult
from strata.writers import CodeWriter

# Streaming pays on a large first index; below this many files to write (a test
# fixture, a small repository) the run writes at the end in one transaction or a few.
STREAM_MIN_FILES = 100
# Batches in flight per writing thread before a send waits for one to land, so a
# resolver that outruns the writes (a slow or remote Neo4j) cannot queue the whole
# run's facts in memory. On a local Neo4j the writes kept pace: Django and sympy
# peaked at the same RSS with and without the bound, in the same time.
STREAM_PENDING_PER_WORKER = 2
# While the stream runs, the resolving thread holds the GIL, and a writing thread
# back from a socket read waits for it up to the interpreter's switch interval
# (5 ms) each time; shortened, the writers keep Neo4j busy.
STREAM_SWITCH_S = 0.0005


class FreshFiles:
    """Sends whole files' own facts in batches of about ``batch_size`` facts."""

    def __init__(self, store: FactStore, *, workers: int, batch_size: int) -> None:
        self._ontology = store.ontology
        self._batch_size = batch_size
        self._writes = CodeWriter(store).stream(
            workers=workers, fresh=True, max_pending=STREAM_PENDING_PER_WORKER * max(1, workers)
        )
        self._batch: list[Fact] = []
        self._switch = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch, STREAM_SWITCH_S))
        # The nodes written with content (the run's changed nodes, for search documents).
        self.nodes: list[tuple[str, str]] = []

    def add(
        self, states: list[StateFact], edges: list[EdgeFact]
    ) -> tuple[list[StateFact], list[EdgeFact]]:
        """Send a file's own facts (with a batch once it is full, waiting while
        :data:`STREAM_PENDING_PER_WORKER` batches per writer are in flight); answers the states
        and edges that wait for the end: shared nodes (no file scope) and edges with
        an endpoint that is not one of the file's own nodes. Raises the error of a
        batch that failed."""
        later_states: list[StateFact] = []
        later_edges: list[EdgeFact] = []
        own: set[tuple[str, str]] = set()
        for fact in states:
            if fact.scope is None:
                later_states.append(fact)
                continue
            key = state_key(self._ontology, fact)
            own.add((fact.label, key))
            if fact.props is not None:
                self.nodes.append((fact.label, key))
            self._batch.append(fact)
        for edge in edges:
            if (edge.src.label, edge.src.key) in own and (edge.dst.label, edge.dst.key) in own:
                self._batch.append(edge)
            else:
                later_edges.append(edge)
        if len(self._batch) >= self._batch_size:
            batch, self._batch = self._batch, []
            self._writes.send(batch)
        return later_states, later_edges

    def finish(self) -> WriteResult:
        """Send the last batch and wait for all: their result, or the first error."""
        try:
            if self._batch:
                batch, self._batch = self._batch, []
                self._writes.send(batch)
            return self._writes.close()
        finally:
            sys.setswitchinterval(self._switch)

    def abort(self) -> None:
        """The run failed: cancel the batches not started, wait for those running."""
        try:
            self._writes.abort()
        finally:
            sys.setswitchinterval(self._switch)

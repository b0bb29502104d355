"""The one writer shape, bound to a layer; the layer classes only fix the layer.

Every layer writes through its ``<Layer>Writer`` and nothing else: the writer
checks each fact against the ontology and the one-writer rule (a label or edge
type of another layer is refused) before any batch reaches the store, and the
store's apply methods are internal to this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import datetime
from typing import Any, ClassVar

from strata.facts import (
    EdgeFact,
    Fact,
    NodeRef,
    Source,
    StateFact,
    check_facts,
    check_layer,
    node_key,
)
from strata.graph.store import FactStore, WriteResult
from strata.ontology.model import Layer
from strata.temporal import now


class LayerWriter:
    """Writes facts of one layer through the fact store."""

    layer: ClassVar[Layer]

    def __init__(self, store: FactStore) -> None:
        self._store = store

    def check(self, facts: Sequence[Fact]) -> None:
        """Refuse the batch (OntologyViolation) if a fact breaks the ontology or the layer.

        The one place the one-writer rule is enforced: every write below calls
        it before anything reaches the database.
        """
        check_facts(self._store.ontology, self.layer, facts)

    def write(
        self, facts: Sequence[Fact], *, tx_time: datetime | None = None, fresh: bool = False
    ) -> WriteResult:
        """Check every fact against the ontology and this layer, then write them at once.

        ``fresh``: see :meth:`FactStore._apply` (no slot has a current version).
        """
        self.check(facts)
        return self._store._apply(facts, tx_time=tx_time, fresh=fresh)

    def retract(self, scopes: Sequence[str], since: datetime) -> int:
        """Take back this layer's versions written in ``scopes`` since ``since`` and
        still believed (a failed first write's): their ``expired_at`` is set, nothing
        is deleted. Only the caller knows that every such version is its own (the
        scopes held nothing open when it began, under its lock). Answers the count."""
        return self._store._retract(self.layer, scopes, since)

    def write_many(
        self,
        batches: Iterable[Sequence[Fact]],
        *,
        workers: int = 2,
        fresh: bool = False,
        on_done: Callable[[WriteResult], None] | None = None,
    ) -> WriteResult:
        """Write batches in concurrent transactions (one per batch), as the indexer needs.

        A fact of another layer in any batch refuses the whole call before the
        first batch is written. Each batch is then checked in full and written
        on a pool thread: while one transaction waits on Neo4j the next is
        checked and planned, so Python and the database work in parallel. Each
        batch is atomic on its own; batches that touch the same nodes are
        serialised by the node locks (a deadlock is retried by the driver).
        ``on_done`` sees each batch's result as it lands (progress reports).
        """
        listed = [batch for batch in batches if batch]
        check_layer(self._store.ontology, self.layer, listed)
        bound = max(1, workers) * 2
        with self.stream(
            workers=workers, fresh=fresh, on_done=on_done, max_pending=bound
        ) as writes:
            for batch in listed:
                writes.send(batch)
            return writes.close()

    def stream(
        self,
        *,
        workers: int = 2,
        fresh: bool = False,
        on_done: Callable[[WriteResult], None] | None = None,
        max_pending: int | None = None,
    ) -> BatchStream:
        """Batches written in concurrent transactions as they are sent, each checked
        and atomic on its own (:meth:`write`); ``max_pending`` bounds the batches in
        flight (``send`` then waits), None does not (the sender never waits)."""
        return BatchStream(self, workers, fresh, on_done, max_pending)

    def ref(self, label: str, **identity: Any) -> NodeRef:
        """A node reference by its identity (the key is composed by the ontology)."""
        return NodeRef(label, node_key(self._store.ontology, label, identity))

    # Asserted facts; closing ones come from StateFact.closing and FactStore.closures.

    def assert_state(
        self,
        label: str,
        identity: Mapping[str, Any],
        props: Mapping[str, Any],
        *,
        valid_at: datetime,
        invalid_at: datetime | None = None,
        source: Source | None = None,
        scope: str | None = None,
    ) -> StateFact:
        return StateFact(
            label, identity, props, valid_at, invalid_at, "assert", source or Source(), scope
        )

    def assert_edge(
        self,
        rel_type: str,
        src: NodeRef,
        dst: NodeRef,
        props: Mapping[str, Any] | None = None,
        *,
        repo: str,
        valid_at: datetime,
        invalid_at: datetime | None = None,
        source: Source | None = None,
        scope: str | None = None,
    ) -> EdgeFact:
        return EdgeFact(
            rel_type,
            src,
            dst,
            repo,
            dict(props or {}),
            valid_at,
            invalid_at,
            "assert",
            source or Source(),
            scope,
        )


class BatchStream:
    """What :meth:`LayerWriter.stream` answers; a context manager that, left on an
    error, cancels the batches not started and waits for those running."""

    def __init__(
        self,
        writer: LayerWriter,
        workers: int,
        fresh: bool,
        on_done: Callable[[WriteResult], None] | None,
        max_pending: int | None,
    ) -> None:
        self._writer = writer
        self._fresh = fresh
        self._on_done = on_done
        self._max_pending = max_pending
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="write")
        self._pending: set[Future[WriteResult]] = set()
        self._total = WriteResult(0, 0, 0, 0, now())

    def __enter__(self) -> BatchStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()

    def send(self, batch: Sequence[Fact]) -> None:
        """Queue one batch; raises the error of a batch that already failed."""
        finished = {f for f in self._pending if f.done()}
        self._reap(finished)
        self._pending.add(self._pool.submit(self._writer.write, batch, fresh=self._fresh))
        if self._max_pending is not None and len(self._pending) >= self._max_pending:
            finished, _ = wait(self._pending, return_when=FIRST_COMPLETED)
            self._reap(finished)

    def close(self) -> WriteResult:
        """Wait for every batch; their summed result, or the first error."""
        finished, _ = wait(self._pending)
        self._reap(finished)
        self._pool.shutdown()
        return self._total

    def abort(self) -> None:
        """Cancel what has not started and wait for what has (idempotent)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _reap(self, finished: set[Future[WriteResult]]) -> None:
        self._pending -= finished
        self._total = _merge_results(self._total, finished, self._on_done)


def _merge_results(
    total: WriteResult,
    done: Iterable[Future[WriteResult]],
    on_done: Callable[[WriteResult], None] | None,
) -> WriteResult:
    for future in done:
        result = future.result()
        if on_done is not None:
            on_done(result)
        total = WriteResult(
            total.facts + result.facts,
            total.created + result.created,
            total.expired + result.expired,
            total.unchanged + result.unchanged,
            max(total.tx_time, result.tx_time),
            total.closed + result.closed,
        )
    return total


class CodeWriter(LayerWriter):
    """The code worker's writer."""

    layer = "code"


class KnowledgeWriter(LayerWriter):
    """The knowledge worker's writer."""

    layer = "knowledge"


class TraceWriter(LayerWriter):
    """The trace worker's writer."""

    layer = "trace"

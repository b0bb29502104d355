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
        total = WriteResult(0, 0, 0, 0, now())
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            pending: set[Future[WriteResult]] = set()
            for batch in listed:
                pending.add(pool.submit(self.write, batch, fresh=fresh))
                if len(pending) >= workers * 2:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    total = _merge_results(total, done, on_done)
            done, _ = wait(pending)
        return _merge_results(total, done, on_done)

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

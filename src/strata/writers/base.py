"""The one writer shape, bound to a layer; the layer classes only fix the layer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar

from strata.facts import EdgeFact, Fact, NodeRef, Source, StateFact, node_key
from strata.graph.store import FactStore, WriteResult
from strata.ontology.model import Layer


class LayerWriter:
    """Writes facts of one layer through the fact store."""

    layer: ClassVar[Layer]

    def __init__(self, store: FactStore) -> None:
        self._store = store

    def write(self, facts: Sequence[Fact], *, tx_time: datetime | None = None) -> WriteResult:
        """Check every fact against the ontology and this layer, then write them at once."""
        return self._store.apply(self.layer, facts, tx_time=tx_time)

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



class CodeWriter(LayerWriter):
    """The code worker's writer."""

    layer = "code"


class KnowledgeWriter(LayerWriter):
    """The knowledge worker's writer."""

    layer = "knowledge"


class TraceWriter(LayerWriter):
    """The trace worker's writer."""

    layer = "trace"

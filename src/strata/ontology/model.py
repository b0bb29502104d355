"""The ontology as frozen, typed models (pure; no I/O)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from strata.errors import OntologyViolation

Layer = Literal["code", "knowledge", "trace"]
Writer = Literal["strata", "graphiti"]
ScalarType = Literal["string", "int", "float", "bool", "datetime", "list[string]", "list[int]"]

STATE = "STATE"
# Derived, rebuildable index data that is not a fact (strata.search.docs writes it):
# backups leave it out and a rebuild drops it with the facts it was derived from.
DERIVED_LABELS: tuple[str, ...] = ("SearchDoc", "SearchCursor")
DERIVED_TYPES: tuple[str, ...] = ("INDEXES",)
"""Relationship type of versioned node attributes: ``(n)-[:STATE {...}]->(n)``."""

KEY_SEPARATOR = "|"

LABEL_RE = re.compile(r"^[A-Z][A-Za-z0-9]{0,62}$")
REL_TYPE_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,62}$")
PROPERTY_RE = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


@dataclass(frozen=True, slots=True)
class PropertySpec:
    """One declared property: a scalar type, or an enumeration of strings."""

    name: str
    type: ScalarType | Literal["enum"]
    enum: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"one of {', '.join(self.enum)}" if self.type == "enum" else self.type

    def problem(self, value: Any) -> str | None:
        """Why ``value`` does not fit, or None when it does (None values are checked apart)."""
        if self.type == "enum":
            if value not in self.enum:
                return f"{value!r} is not {self.describe()}"
            return None
        ok = _CHECKS[self.type](value)
        return None if ok else f"expected {self.type}, got {type(value).__name__} {value!r:.60}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_aware_datetime(value: Any) -> bool:
    return isinstance(value, datetime) and value.utcoffset() is not None


_CHECKS: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "int": _is_int,
    "float": lambda v: (isinstance(v, float | int)) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "datetime": _is_aware_datetime,
    "list[string]": lambda v: isinstance(v, list | tuple) and all(isinstance(x, str) for x in v),
    "list[int]": lambda v: isinstance(v, list | tuple) and all(_is_int(x) for x in v),
}


@dataclass(frozen=True, slots=True)
class PropertySet:
    """Required and optional properties of a state or an edge."""

    required: tuple[PropertySpec, ...] = ()
    optional: tuple[PropertySpec, ...] = ()
    all: dict[str, PropertySpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Every property by name; built once, read on every checked write.
        object.__setattr__(self, "all", {p.name: p for p in (*self.required, *self.optional)})

    def problems(self, props: dict[str, Any]) -> list[str]:
        """Every way ``props`` breaks this set (missing, unknown, mistyped)."""
        found: list[str] = []
        declared = self.all
        for spec in self.required:
            if props.get(spec.name) is None:
                found.append(f"missing required property {spec.name!r} ({spec.describe()})")
        for name, value in props.items():
            declared_spec = declared.get(name)
            if declared_spec is None:
                found.append(f"unknown property {name!r}")
            elif value is not None and (why := declared_spec.problem(value)) is not None:
                found.append(f"property {name!r}: {why}")
        return found


@dataclass(frozen=True, slots=True)
class NodeType:
    label: str
    layer: Layer
    identity: tuple[PropertySpec, ...]
    key: tuple[str, ...]
    state: PropertySet
    writer: Writer = "strata"

    def make_key(self, identity: Mapping[str, Any]) -> str:
        """The stable key: the key fields, escaped and joined by ``|``."""
        return KEY_SEPARATOR.join(_escape(str(identity[name])) for name in self.key)


@dataclass(frozen=True, slots=True)
class EdgeType:
    type: str
    layer: Layer
    from_labels: tuple[str, ...]
    to_labels: tuple[str, ...]
    props: PropertySet
    writer: Writer = "strata"


@dataclass(frozen=True, slots=True)
class Ontology:
    """One version of the contract; load it once per process and pass it down."""

    version: int
    name: str
    layers: tuple[Layer, ...]
    fact_properties: PropertySet
    nodes: dict[str, NodeType] = field(default_factory=dict)
    edges: dict[str, EdgeType] = field(default_factory=dict)

    def node(self, label: str) -> NodeType:
        """The declared node type, or an OntologyViolation naming the label."""
        found = self.nodes.get(label)
        if found is None:
            raise OntologyViolation(
                f"unknown label {label!r} (ontology v{self.version})",
                rule="unknown_label",
                label=label,
            )
        return found

    def edge(self, rel_type: str) -> EdgeType:
        """The declared edge type, or an OntologyViolation naming the type."""
        found = self.edges.get(rel_type)
        if found is None:
            raise OntologyViolation(
                f"unknown edge type {rel_type!r} (ontology v{self.version})",
                rule="unknown_edge_type",
                edge_type=rel_type,
            )
        return found

    def labels(self, layer: Layer | None = None) -> list[str]:
        return [n.label for n in self.nodes.values() if layer is None or n.layer == layer]

    def edge_types(self, layer: Layer | None = None) -> list[str]:
        return [e.type for e in self.edges.values() if layer is None or e.layer == layer]

    def fact_types(self, layer: Layer | None = None) -> list[str]:
        """Every relationship type that carries bitemporal facts written by Strata; of
        ``layer``: its edge types, and STATE when it owns a label (a state found
        elsewhere would be another layer's)."""
        states = [STATE] if layer is None or self.labels(layer) else []
        edges = [t for t in self.edge_types(layer) if self.edges[t].writer == "strata"]
        return [*states, *edges]


def key_prefix(first: str) -> str:
    """What every stable key whose first key field is ``first`` starts with (a range
    seek on a key index: e.g. every node of a repository, for the labels keyed by it)."""
    return _escape(first) + KEY_SEPARATOR


def _escape(part: str) -> str:
    return part.replace("%", "%25").replace(KEY_SEPARATOR, "%7C")

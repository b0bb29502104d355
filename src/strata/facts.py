"""Write contracts: the facts a layer writer hands to the store, and their checks.

Pure: validation against the ontology happens here, before anything reaches
Neo4j, and reports every broken record of a batch at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from strata.errors import OntologyViolation, TemporalError
from strata.ontology.model import EdgeType, Layer, NodeType, Ontology
from strata.temporal import Change, aware

MAX_STRING = 20_000
"""Longest string property a fact may carry (bounded answers, bounded writes)."""


@dataclass(frozen=True, slots=True)
class Source:
    """Where a fact came from: a commit and file span, or a document."""

    commit: str | None = None
    path: str | None = None
    line: int | None = None
    doc: str | None = None

    def props(self) -> dict[str, Any]:
        return {
            "source_commit": self.commit,
            "source_path": self.path,
            "source_line": self.line,
            "source_doc": self.doc,
        }


@dataclass(frozen=True, slots=True)
class NodeRef:
    """A node by label and stable key."""

    label: str
    key: str


@dataclass(frozen=True, slots=True)
class StateFact:
    """The versioned attributes of one node over [valid_at, invalid_at).

    ``props`` None says the entity does not exist over the interval
    (invalidate, or a correction that it never existed). Such a fact may name
    its node by ``key`` alone (the node already exists, so no identity is
    needed to create it).
    """

    label: str
    identity: Mapping[str, Any]
    props: Mapping[str, Any] | None
    valid_at: datetime
    invalid_at: datetime | None = None
    change: Change = "assert"
    source: Source = field(default_factory=Source)
    scope: str | None = None
    key: str | None = None

    @classmethod
    def closing(
        cls, label: str, key: str, at: datetime, *, change: Change = "invalidate"
    ) -> StateFact:
        """The node stops existing at ``at`` (named by its key)."""
        return cls(label, {}, None, at, change=change, key=key)


@dataclass(frozen=True, slots=True)
class EdgeFact:
    """One edge fact (type, from, to) over [valid_at, invalid_at); props None: absent."""

    type: str
    src: NodeRef
    dst: NodeRef
    repo: str
    props: Mapping[str, Any] | None
    valid_at: datetime
    invalid_at: datetime | None = None
    change: Change = "assert"
    source: Source = field(default_factory=Source)
    scope: str | None = None


Fact = StateFact | EdgeFact


def state_key(ontology: Ontology, fact: StateFact) -> str:
    """The key of the node a state fact is about."""
    return fact.key if fact.key is not None else node_key(ontology, fact.label, fact.identity)


def node_key(ontology: Ontology, label: str, identity: Mapping[str, Any]) -> str:
    """The stable key of a node, after checking its identity against the ontology."""
    node = ontology.node(label)
    problems = _identity_problems(node, identity)
    if problems:
        raise OntologyViolation(
            f"{label} identity: " + "; ".join(problems), rule="identity", label=label
        )
    return node.make_key(identity)


def _identity_problems(node: NodeType, identity: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    declared = {p.name: p for p in node.identity}
    for name, spec in declared.items():
        value = identity.get(name)
        if value is None or value == "":
            problems.append(f"missing identity field {name!r}")
        elif (why := spec.problem(value)) is not None:
            problems.append(f"identity field {name!r}: {why}")
    problems.extend(f"unknown identity field {name!r}" for name in identity if name not in declared)
    return problems


def _string_problems(props: Mapping[str, Any]) -> list[str]:
    return [
        f"property {name!r} is longer than {MAX_STRING} characters"
        for name, value in props.items()
        if isinstance(value, str) and len(value) > MAX_STRING
    ]


def _time_problems(fact: Fact) -> list[str]:
    try:
        start = aware(fact.valid_at, what="valid_at")
        if fact.invalid_at is not None and aware(fact.invalid_at, what="invalid_at") <= start:
            return ["invalid_at must be after valid_at"]
    except TemporalError as exc:
        return [exc.message]
    return []


def check_facts(ontology: Ontology, layer: Layer, facts: Sequence[Fact]) -> None:
    """Refuse the whole batch if any fact breaks the ontology or the layer rule.

    The error lists each broken record (its index and identity) with the rule.
    """
    problems: list[str] = []
    for index, fact in enumerate(facts):
        for why in _fact_problems(ontology, layer, fact):
            problems.append(f"record {index} ({_describe(fact)}): {why}")
    if problems:
        shown = problems[:50]
        more = f"\n  ... and {len(problems) - 50} more" if len(problems) > 50 else ""
        raise OntologyViolation(
            f"{len(problems)} ontology violation(s) in a batch of {len(facts)}; nothing was "
            "written:\n  - " + "\n  - ".join(shown) + more,
            rule="batch",
            problems=problems[:200],
        )


def layer_problem(ontology: Ontology, layer: Layer, fact: Fact) -> str | None:
    """The one-writer rule: why ``fact`` belongs to another layer (None: it does not).

    An undeclared label or type is not another layer's; :func:`check_facts`
    refuses it as unknown.
    """
    declared: NodeType | EdgeType | None
    if isinstance(fact, StateFact):
        what, name, declared = "label", fact.label, ontology.nodes.get(fact.label)
    else:
        what, name, declared = "edge type", fact.type, ontology.edges.get(fact.type)
    if declared is None or declared.layer == layer:
        return None
    return (
        f"{what} {name!r} belongs to the {declared.layer} layer; "
        f"the {layer} writer may not write it"
    )


def check_layer(ontology: Ontology, layer: Layer, batches: Sequence[Sequence[Fact]]) -> None:
    """Refuse every batch if any fact in any of them belongs to another layer.

    Cheap (one lookup a fact), so a writer runs it over a whole multi-batch
    write before the first batch is written.
    """
    problems = [
        f"batch {b} record {i} ({_describe(fact)}): {why}"
        for b, batch in enumerate(batches)
        for i, fact in enumerate(batch)
        if (why := layer_problem(ontology, layer, fact))
    ]
    if problems:
        raise OntologyViolation(
            f"{len(problems)} fact(s) of another layer; nothing was written:\n  - "
            + "\n  - ".join(problems[:50]),
            rule="one_writer",
            problems=problems[:200],
        )


def _describe(fact: Fact) -> str:
    if isinstance(fact, StateFact):
        shown = ", ".join(f"{k}={v!r:.40}" for k, v in fact.identity.items())
        return f"{fact.label} {{{shown}}}"
    return (
        f"({fact.src.label} {fact.src.key!r})-[:{fact.type}]->({fact.dst.label} {fact.dst.key!r})"
    )


def _fact_problems(ontology: Ontology, layer: Layer, fact: Fact) -> list[str]:
    if isinstance(fact, StateFact):
        return _state_problems(ontology, layer, fact)
    return _edge_problems(ontology, layer, fact)


def _state_problems(ontology: Ontology, layer: Layer, fact: StateFact) -> list[str]:
    node = ontology.nodes.get(fact.label)
    if node is None:
        return [f"unknown label {fact.label!r}"]
    problems = [why] if (why := layer_problem(ontology, layer, fact)) else []
    if node.writer != "strata":
        problems.append(f"label {fact.label!r} is written by {node.writer}, not by Strata")
    if fact.key is not None:
        if fact.props is not None:
            problems.append("a state fact named by key alone can only close (props None)")
    else:
        problems.extend(_identity_problems(node, fact.identity))
    if fact.props is not None:
        problems.extend(node.state.problems(dict(fact.props)))
        problems.extend(_string_problems(fact.props))
    problems.extend(_time_problems(fact))
    return problems


def _edge_problems(ontology: Ontology, layer: Layer, fact: EdgeFact) -> list[str]:
    edge = ontology.edges.get(fact.type)
    if edge is None:
        return [f"unknown edge type {fact.type!r}"]
    problems = [why] if (why := layer_problem(ontology, layer, fact)) else []
    if edge.writer != "strata":
        problems.append(f"edge type {fact.type!r} is written by {edge.writer}, not by Strata")
    if fact.src.label not in edge.from_labels:
        allowed = ", ".join(edge.from_labels)
        problems.append(f"{fact.type} may not start at {fact.src.label} (allowed: {allowed})")
    if fact.dst.label not in edge.to_labels:
        allowed = ", ".join(edge.to_labels)
        problems.append(f"{fact.type} may not end at {fact.dst.label} (allowed: {allowed})")
    if not fact.repo:
        problems.append("an edge fact needs its repo")
    if fact.props is not None:
        problems.extend(edge.props.problems(dict(fact.props)))
        problems.extend(_string_problems(fact.props))
    problems.extend(_time_problems(fact))
    return problems

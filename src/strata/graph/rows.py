"""UNWIND rows of the fact store: versions read back, and planned versions grouped
by the statement that writes them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from strata.facts import Fact
from strata.ontology.model import STATE
from strata.temporal import TIME_FIELDS, Plan, Version, aware, decode_fact, to_wire, utc_values

StateSlot = tuple[str, str]  # label, key
EdgeSlot = tuple[str, str, str, str, str]  # type, src label, src key, dst label, dst key


def version_of(ref: str, props: Mapping[str, Any]) -> Version:
    """A stored version read through the slim projection."""
    values = decode_fact(props)
    return Version(
        hash=str(values.get("hash", "")),
        valid_at=values["valid_at"],
        invalid_at=values.get("invalid_at"),
        created_at=values["created_at"],
        expired_at=values.get("expired_at"),
        invalidated_at=values.get("invalidated_at"),
        ref=ref,
        payload={k: v for k, v in values.items() if k not in TIME_FIELDS},
    )


def slot_since(facts: Sequence[Fact]) -> str:
    """The earliest valid time any of a slot's changes touches."""
    return to_wire(min(aware(f.valid_at) for f in facts))


def version_row(version: Version, **ends: str) -> dict[str, Any]:
    """One UNWIND row: content and bookkeeping, and the times as wire strings."""
    return {
        **ends,
        "props": {k: utc_values(v) for k, v in version.payload.items() if v is not None}
        if version.copy_of is None
        else None,
        "valid_at": to_wire(version.valid_at),
        "invalid_at": to_wire(version.invalid_at) if version.invalid_at is not None else None,
        "created_at": to_wire(version.created_at),
    }


@dataclass(slots=True)
class CreationRows:
    """Planned new versions, grouped by the statement that creates them."""

    copies: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    at_nodes: list[dict[str, Any]] = field(default_factory=list)
    states: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    edges: dict[tuple[str, str, str], list[dict[str, Any]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    count: int = 0

    @classmethod
    def of(
        cls, plans: Mapping[tuple[str, ...], Plan], nodes: Mapping[StateSlot, str]
    ) -> CreationRows:
        """Remainders to copy server-side; state versions on a node whose element id
        ``nodes`` holds (locked by this transaction), else by key; edges by their
        endpoints' keys."""
        out = cls()
        for slot, plan in plans.items():
            rel = STATE if len(slot) == 2 else slot[0]
            for version in plan.create:
                out.count += 1
                if version.copy_of is not None:
                    out.copies[rel].append(version_row(version, copy_of=version.copy_of))
                elif len(slot) == 2:
                    node = nodes.get((slot[0], slot[1]))
                    if node is not None:
                        out.at_nodes.append(version_row(version, node=node))
                    else:
                        out.states[slot[0]].append(version_row(version, key=slot[1]))
                else:
                    _, src_label, src_key, dst_label, dst_key = slot
                    out.edges[(rel, src_label, dst_label)].append(
                        version_row(version, src=src_key, dst=dst_key)
                    )
        return out

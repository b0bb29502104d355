"""The bitemporal invariants of one repository's facts, checked against the graph.

Every fact slot (a node's STATE self-relationship, or one edge type between
two nodes) must have at most one open version (``invalid_at IS NULL AND
expired_at IS NULL``), and no two unexpired versions of a slot may overlap in
valid time: what Strata believes now is one timeline per slot. The fact store
guarantees this under its write locks; this module proves it after the fact
(after a crash, a killed worker, a restarted database), for an operator
(``strata check-integrity --repo NAME``) and for the fault benchmark.

A slot is (source node, type, target node), as the store keys it (the scope
is a property of a version, not part of its slot). One statement per fact
type, grouped and compared in the database: only violating slots travel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from strata.graph.gateway import Gateway, checked_rel_type
from strata.ontology.model import Ontology

# Versions of a slot sorted by valid_at: two overlap if and only if some
# adjacent pair does (an earlier version reaching past the start of the next).
SLOT_VIOLATIONS = """
MATCH (a)-[r:{rel}]->(b)
WHERE r.repo = $repo AND r.expired_at IS NULL
WITH a, b, r ORDER BY r.valid_at
WITH a, b, collect(r) AS versions
WHERE size(versions) > 1
WITH a, b, versions,
     size([v IN versions WHERE v.invalid_at IS NULL]) AS open,
     size([i IN range(0, size(versions) - 2)
           WHERE versions[i].invalid_at IS NULL
              OR versions[i].invalid_at > versions[i + 1].valid_at]) AS overlaps
WHERE open > 1 OR overlaps > 0
RETURN a.key AS src, b.key AS dst, size(versions) AS versions, open, overlaps
ORDER BY src, dst
LIMIT $limit
"""

SLOT_COUNT = """
MATCH (a)-[r:{rel}]->(b)
WHERE r.repo = $repo AND r.expired_at IS NULL
RETURN count(DISTINCT [elementId(a), elementId(b)]) AS slots, count(r) AS versions
"""


@dataclass(frozen=True, slots=True)
class SlotViolation:
    """One slot that breaks an invariant: its open and overlapping version counts."""

    rel: str
    src: str
    dst: str
    versions: int
    open: int
    overlaps: int

    def describe(self) -> str:
        where = self.src if self.rel == "STATE" else f"{self.src} -[{self.rel}]-> {self.dst}"
        return (
            f"{where}: {self.open} open of {self.versions} unexpired versions, "
            f"{self.overlaps} overlapping pair(s)"
        )


@dataclass(slots=True)
class IntegrityReport:
    """What the check saw: slots and unexpired versions per type, and the violations."""

    repo: str
    slots: dict[str, int] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    violations: list[SlotViolation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def duplicates(self) -> int:
        """Slots with more than one open version."""
        return sum(1 for v in self.violations if v.open > 1)

    @property
    def overlapping(self) -> int:
        """Slots with two unexpired versions overlapping in valid time."""
        return sum(1 for v in self.violations if v.overlaps > 0)


def check_repository(
    gateway: Gateway, ontology: Ontology, repo: str, *, limit: int = 1000
) -> IntegrityReport:
    """Check every fact slot of ``repo`` (STATE and every Strata-written edge type).

    At most ``limit`` violating slots are returned per type. Read-only.
    """
    report = IntegrityReport(repo=repo)
    for rel in ontology.fact_types():
        name = checked_rel_type(rel)  # an ontology name, checked again where Cypher is built
        [counted] = gateway.read(SLOT_COUNT.format(rel=name), repo=repo)
        if not counted["versions"]:
            continue
        report.slots[rel] = int(counted["slots"])
        report.versions[rel] = int(counted["versions"])
        for row in gateway.read(SLOT_VIOLATIONS.format(rel=name), repo=repo, limit=limit):
            report.violations.append(
                SlotViolation(
                    rel=rel,
                    src=str(row["src"]),
                    dst=str(row["dst"]),
                    versions=int(row["versions"]),
                    open=int(row["open"]),
                    overlaps=int(row["overlaps"]),
                )
            )
    return report

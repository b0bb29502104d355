"""The digest of a file's facts: what a re-sync compares, nothing else."""

from __future__ import annotations

from datetime import UTC, datetime

from strata.code.sync import facts_digest
from strata.facts import EdgeFact, Fact, NodeRef, Source, StateFact

T1 = datetime(2025, 1, 1, tzinfo=UTC)
T2 = datetime(2025, 2, 1, tzinfo=UTC)
IDENTITY = {"repo": "r", "ref": "main", "path": "a.py", "qualname": "f"}


def _facts(
    *, at: datetime = T1, commit: str = "c1", signature: str = "def f()", target: str = "g"
) -> list[Fact]:
    source = Source(commit, "a.py", 3)
    return [
        StateFact(
            "Symbol",
            IDENTITY,
            {"kind": "function", "signature": signature},
            at,
            source=source,
            scope="r|main|a.py",
        ),
        EdgeFact(
            "CALLS",
            NodeRef("Symbol", "r|main|a.py|f"),
            NodeRef("Symbol", f"r|main|b.py|{target}"),
            "r",
            {"count": 1},
            at,
            source=source,
            scope="r|main|a.py",
        ),
    ]


def test_the_valid_time_and_the_source_do_not_count() -> None:
    assert facts_digest(_facts()) == facts_digest(_facts(at=T2, commit="c2"))


def test_content_slots_and_order_do() -> None:
    base = facts_digest(_facts())
    assert facts_digest(_facts(signature="def f(x)")) != base
    assert facts_digest(_facts(target="h")) != base
    assert facts_digest(list(reversed(_facts()))) != base  # a re-sync, never a miss
    assert facts_digest(_facts()[:1]) != base

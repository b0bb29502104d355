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


def test_equal_values_digest_alike_whichever_objects_they_share() -> None:
    """A run that shares one props dict (or one string) between facts and a run that
    builds each anew must agree: a spurious difference would re-sync the file."""
    shared = {"kind": "function", "signature": "def f()"}
    one = [
        StateFact("Symbol", IDENTITY, shared, T1, scope="s"),
        StateFact("Symbol", {**IDENTITY, "qualname": "g"}, shared, T1, scope="s"),
    ]
    two = [
        StateFact("Symbol", dict(IDENTITY), dict(shared), T1, scope="".join(["s"])),
        StateFact("Symbol", {**IDENTITY, "qualname": "g"}, dict(shared), T1, scope="s"),
    ]
    assert facts_digest(one) == facts_digest(two)


def test_a_value_pickle_refuses_still_digests_by_its_text() -> None:
    class Odd:  # a local class: pickle refuses it
        def __init__(self, text: str) -> None:
            self.text = text

        def __repr__(self) -> str:
            return f"Odd({self.text})"

    def odd(text: str) -> list[Fact]:
        return [StateFact("Symbol", IDENTITY, {"kind": Odd(text)}, T1, scope="s")]

    assert facts_digest(odd("a")) == facts_digest(odd("a"))
    assert facts_digest(odd("a")) != facts_digest(odd("b"))

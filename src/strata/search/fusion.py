"""Reciprocal rank fusion: one ranking from several retrievers' rankings.

``score(d) = sum over retrievers r of 1 / (k + rank_r(d))`` with ranks from 1
and ``k = 60`` (Cormack, Clarke and Büttcher, SIGIR 2009): a document near the
top of any list scores well, one in several lists scores best, and the
retrievers' raw scores (BM25, cosine, graph degree) never have to be compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

RRF_K = 60


@dataclass(frozen=True, slots=True)
class Ranked:
    """One retriever's answer for one document: its 1-based rank and raw score."""

    key: str
    score: float
    note: str | None = None  # e.g. the hit a graph neighbour was reached from


@dataclass(slots=True)
class Fused:
    """A document's fused score and, per retriever, where it ranked."""

    key: str
    score: float = 0.0
    ranks: dict[str, tuple[int, float, str | None]] = field(default_factory=dict)


def rrf(
    rankings: Mapping[str, Sequence[Ranked]],
    *,
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
    shared: frozenset[str] = frozenset(),
) -> list[Fused]:
    """Fuse ``{retriever: ranked list (best first)}``; ties broken by key.

    ``weights`` scale a retriever's contribution (default 1): graph proximity
    only boosts, so it counts for less than a retriever that read the text. In a
    ``shared`` retriever's list, documents of equal score share a rank (1, 2, 2, 4):
    its scores are counts, and the order among equals says nothing.
    """
    fused: dict[str, Fused] = {}
    for retriever, ranked in rankings.items():
        seen: set[str] = set()
        rank = position = 0
        last: float | None = None
        for item in ranked:
            if item.key in seen:
                continue
            seen.add(item.key)
            position += 1
            if retriever not in shared or item.score != last:
                rank, last = position, item.score
            entry = fused.setdefault(item.key, Fused(item.key))
            entry.score += (weights or {}).get(retriever, 1.0) / (k + rank)
            entry.ranks[retriever] = (rank, item.score, item.note)
    return sorted(fused.values(), key=lambda f: (-f.score, f.key))


def demoted(fused: list[Fused], keys: set[str], factor: float) -> list[Fused]:
    """The fused ranking with the scores of ``keys`` scaled by ``factor``, re-sorted."""
    if not keys:
        return fused
    for entry in fused:
        if entry.key in keys:
            entry.score *= factor
    return sorted(fused, key=lambda f: (-f.score, f.key))

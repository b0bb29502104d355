"""A file-level ranking rolled up from the fused ranking of files and their symbols.

"Which files does this change touch?" is answered better by a file's whole
evidence than by its single best hit: a file with three matching functions
outranks one with a lucky name match. A file's score is the fused score of its
own document plus its symbols' fused scores, each ``DECAY`` times the one
before it (best first), so one file cannot win on sheer size.

That ranking is then fused, by reciprocal rank, with the coverage retriever's
(files by how many of the query's words they hold; :data:`COVERAGE_WEIGHT`):
the two disagree where each is weak. A file's best hits say which file a
query's rare, specific words point at; coverage says which file holds all of
a message's ordinary words ("echo via pager errors"), where the summed hits
favour the file that repeats one of them. On the retrieval harness (102 cases,
6 trees) see the README's retrieval row.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from strata.search.fusion import Fused, Ranked, rrf

DECAY = 0.5
COVERAGE_WEIGHT = 1.0  # as much as the rollup: neither is the better ranking alone
MAX_FILES = 50


@dataclass(frozen=True, slots=True)
class FileScore:
    """One file of the rollup: its score and the keys (best first) that gave it."""

    path: str
    score: float
    keys: tuple[str, ...]


def file_rollup(
    fused: Sequence[Fused],
    paths: Mapping[str, str],
    *,
    coverage: Sequence[tuple[str, float]] = (),
    decay: float = DECAY,
) -> list[FileScore]:
    """Files ranked by their decayed sum of fused scores, fused with ``coverage`` (file
    keys and how many query words each holds) when it ran; ties broken by path."""
    members: dict[str, list[Fused]] = defaultdict(list)
    for item in fused:
        path = paths.get(item.key)
        if path:
            members[path].append(item)
    scored: list[FileScore] = []
    for path, items in members.items():
        items.sort(key=lambda f: -f.score)
        total = sum(f.score * decay**i for i, f in enumerate(items))
        scored.append(FileScore(path, round(total, 6), tuple(f.key for f in items[:5])))
    scored.sort(key=lambda f: (-f.score, f.path))
    if coverage:
        scored = _with_coverage(scored, coverage, paths)
    return scored[:MAX_FILES]


def _with_coverage(
    scored: list[FileScore], coverage: Sequence[tuple[str, float]], paths: Mapping[str, str]
) -> list[FileScore]:
    """The rollup and the coverage ranking fused by reciprocal rank; files that hold as
    many of the words share a coverage rank (which of them comes first is for the
    rollup to say, not for the order the index happened to list them in)."""
    keys = {f.path: f.keys for f in scored}
    covered = sorted(((k, c) for k, c in coverage if paths.get(k)), key=lambda kc: -kc[1])
    for key, _ in covered:
        keys.setdefault(paths[key], (key,))
    rankings = {
        "rollup": [Ranked(f.path, f.score) for f in scored],
        "coverage": [Ranked(paths[k], c) for k, c in covered],
    }
    fused = rrf(rankings, weights={"coverage": COVERAGE_WEIGHT}, shared=frozenset({"coverage"}))
    return [FileScore(f.key, round(f.score, 6), keys[f.key]) for f in fused]

"""A file-level ranking rolled up from the fused ranking of files and their symbols.

"Which files does this change touch?" is answered better by a file's whole
evidence than by its single best hit: a file with three matching functions
outranks one with a lucky name match. A file's score is the fused score of its
own document plus its symbols' fused scores, each ``DECAY`` times the one
before it (best first), so one file cannot win on sheer size.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from strata.search.fusion import Fused

DECAY = 0.5
MAX_FILES = 50


@dataclass(frozen=True, slots=True)
class FileScore:
    """One file of the rollup: its score and the keys (best first) that gave it."""

    path: str
    score: float
    keys: tuple[str, ...]


def file_rollup(
    fused: Sequence[Fused], paths: Mapping[str, str], *, decay: float = DECAY
) -> list[FileScore]:
    """Files ranked by their decayed sum of fused scores; ties broken by path."""
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
    return scored[:MAX_FILES]

"""The cyclic collector around the indexer's large, acyclic data.

An index run builds millions of small objects (extracts, flow statements, the
solver's values, facts) and almost no cycles. With the collector on, every
full pass rescans all of them: on a full Django index 8 full passes cost ~6.5
of 34.7 s (resolve 11.3 s -> 6.6 s, plan 1.3 s -> 0.02 s with it paused) and
freed 110k objects. So the run pauses it while it reads, plans and resolves,
and writes with it on over the new objects only (:func:`heap_frozen`: the
database driver's answers hold cycles, and with the collector paused throughout
the peak grew 130 MB).

What is alive when a write starts stays frozen (exempt from collections) after
it: the extract sets and flow indexes a process keeps between runs. The one
large cyclic structure a run makes, its resolver, is broken up before (see
:meth:`strata.code.resolver.Resolver.release`), so reference counting frees
it. A process that runs many jobs calls :func:`settle` between them (the
code worker, after each job): it collects what is not
frozen (the write's leftovers: fast) and freezes what survived; a cyclic
leftover that got frozen anyway is reclaimed by a full collection once the
frozen heap has grown by a quarter since the last one.
Before, every run thawed the heap and the worker's collection after each push
rescanned all of it: ~2 s on a 2,800-file repository, which a push arriving
right after waited for.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# A full collection (thawing the frozen heap) once it grew by this much since the last.
COMPACT_GROWTH = 1.25
# "managed": some caller settles this process between runs (then a write's freeze
# stays); "frozen": the frozen count after the last full collection.
_state = {"managed": 0, "frozen": 0}


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside; the collector's earlier state is restored after."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def freeze_before_resuming() -> None:
    """Freeze what is alive, as the last step of a :func:`collector_paused` block
    that :func:`heap_frozen` follows.

    Everything made while the collector was paused is still in its youngest
    generation, and the first allocation after it is back on starts a pass
    over that generation: over every object of a run (1.25 s after a full
    Django index). Frozen first, they are left out of that pass too.
    """
    gc.freeze()


@contextmanager
def heap_frozen() -> Iterator[None]:
    """Inside, the collector's passes leave out every object alive on entry
    (``gc.freeze``). In a process that calls :func:`settle` between runs they stay
    left out after, until it finds the frozen heap grown enough to compact it;
    elsewhere (a test session, a one-off run) they are thawed on the way out."""
    gc.freeze()
    try:
        yield
    finally:
        if not _state["managed"]:
            gc.unfreeze()


def settle() -> bool:
    """Between runs: collect the objects that are not frozen, then freeze the rest.

    When the frozen heap has grown by :data:`COMPACT_GROWTH` since the last full
    collection, it is thawed and fully collected first (seconds on a large
    repository, rarely: a new repository's extracts, or cyclic leftovers piling
    up). Returns whether it did so.
    """
    _state["managed"] = 1
    compact = gc.get_freeze_count() >= COMPACT_GROWTH * _state["frozen"]
    if compact:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
    if compact:
        _state["frozen"] = gc.get_freeze_count()
    return compact

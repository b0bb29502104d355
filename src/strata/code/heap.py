"""The cyclic collector around the indexer's large, acyclic data.

An index run builds millions of small objects (extracts, flow statements, the
solver's values, facts) and almost no cycles. With the collector on, every
full pass rescans all of them: on a full Django index 8 full passes cost ~6.5
of 34.7 s (resolve 11.3 s -> 6.6 s, plan 1.3 s -> 0.02 s with it paused) and
freed 110k objects. So the run pauses it while it reads, plans and resolves,
and writes with it on over the new objects only (:func:`heap_frozen`: the
database driver's answers hold cycles, and with the collector paused throughout
the peak grew 130 MB); whoever owns the process collects once afterwards
(:func:`strata.code.indexer.settle_heap` in the worker; a CLI run exits).
Acyclic garbage is still freed at once by reference counting.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


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


@contextmanager
def heap_frozen() -> Iterator[None]:
    """Inside, the collector's passes leave out every object alive on entry
    (``gc.freeze``); after, they are back in its oldest generation, so what became
    garbage meanwhile is freed by the next full pass (the worker's settle)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

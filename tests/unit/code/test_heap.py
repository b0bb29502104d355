"""The collector around index runs: a released resolver is freed by reference counting,
and a settled process keeps its long-lived heap frozen (strata.code.heap)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from strata.code import heap
from tests.unit.flow._pipeline import resolver

FILES = {
    "app/models.py": """
        class Store:
            def save(self, item):
                return self.write(item)

            def write(self, item):
                return item

        def build():
            return Store()
        """,
    "app/views.py": """
        from app.models import build

        def handle(item):
            store = build()
            return store.save(item)
        """,
}


@pytest.fixture
def fresh_heap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The module's state as in a new process, and the heap thawed again after the test
    (the rest of the session must not run with a frozen heap)."""
    monkeypatch.setitem(heap._state, "managed", 0)
    monkeypatch.setitem(heap._state, "frozen", 0)
    yield
    gc.unfreeze()


@pytest.mark.interpreted  # weak references to the flow index and its solver
def test_a_used_resolver_is_cyclic_garbage_until_released() -> None:
    """The flow index, its solver and the receiver types point back at the resolver:
    without release only the cyclic collector frees them; with it, refcounting does."""
    gc.disable()
    try:
        kept = resolver(FILES)
        assert kept.resolve_file("app/views.py").calls  # the solver ran
        flow = weakref.ref(kept.flow)
        del kept
        assert flow() is not None  # a cycle: still alive without a collection

        used = resolver(FILES)
        assert used.resolve_file("app/views.py").calls
        solver = weakref.ref(used.flow.solver)
        receivers = weakref.ref(used.receivers)
        used.release()
        del used
        assert solver() is None
        assert receivers() is None
    finally:
        gc.enable()
        gc.collect()


def test_unsettled_process_thaws_after_a_write(fresh_heap: None) -> None:
    with heap.heap_frozen():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_settled_process_keeps_the_heap_frozen_and_compacts_on_growth(
    fresh_heap: None,
) -> None:
    assert heap.settle() is True  # the first settle of a process collects everything
    after_first = gc.get_freeze_count()
    assert after_first > 0
    with heap.heap_frozen():
        pass
    assert gc.get_freeze_count() >= after_first  # a write no longer thaws it
    assert heap.settle() is False  # little growth: the cheap collection only

    # A cycle made between runs and frozen by a write is kept until the heap grows.
    class Node:
        def __init__(self) -> None:
            self.me = self

    leftover = weakref.ref(Node())
    with heap.heap_frozen():
        pass
    assert heap.settle() is False
    assert leftover() is not None  # frozen: no collection sees it yet
    grown = [[i] for i in range(int(after_first * heap.COMPACT_GROWTH))]  # long-lived growth
    assert heap.settle() is False  # frozen now; the next settle sees the growth
    assert heap.settle() is True
    assert leftover() is None  # the compaction thawed and freed it
    del grown

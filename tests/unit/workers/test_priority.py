"""A worker of the background queues only lowers its CPU priority; the code worker never."""

from __future__ import annotations

import pytest

from strata_workers.priority import background_nice

BACKGROUND = {"knowledge", "trace"}


@pytest.mark.parametrize(
    ("consumed", "expected"),
    [
        ({"knowledge"}, 10),
        ({"trace"}, 10),
        ({"knowledge", "trace"}, 10),
        ({"code"}, 0),
        ({"code", "knowledge"}, 0),  # one worker for every queue: the pushes come first
        (set(), 0),
    ],
)
def test_only_background_workers_yield(consumed: set[str], expected: int) -> None:
    assert background_nice(consumed, BACKGROUND, 10) == expected


def test_zero_turns_it_off() -> None:
    assert background_nice({"knowledge"}, BACKGROUND, 0) == 0

"""Bad input is refused with a typed error before anything is read."""

from __future__ import annotations

import pytest

from strata.context.check import MAX_BUDGET, MAX_TASK_CHARS, MIN_BUDGET, check_budget, check_task
from strata.errors import ValidationError


class TestTask:
    """Empty, huge and binary task text is refused; ordinary text is stripped."""

    @pytest.mark.parametrize(
        "task", ["", "   \n", "x" * (MAX_TASK_CHARS + 1), "a\x00b", "bell\x07", b"bytes", 5]
    )
    def test_refused(self, task: object) -> None:
        with pytest.raises(ValidationError) as err:
            check_task(task)
        assert err.value.details["field"] == "task"

    def test_kept(self) -> None:
        assert check_task("  who calls\tdiscount?\n") == "who calls\tdiscount?"
        assert check_task("ünïcode ✓") == "ünïcode ✓"


class TestBudget:
    """Budgets outside 50..20,000 tokens are refused."""

    @pytest.mark.parametrize("budget", [0, 1, MIN_BUDGET - 1, MAX_BUDGET + 1, 1_000_000, True, 5.0])
    def test_refused(self, budget: object) -> None:
        with pytest.raises(ValidationError):
            check_budget(budget)

    @pytest.mark.parametrize("budget", [MIN_BUDGET, 500, MAX_BUDGET])
    def test_kept(self, budget: int) -> None:
        assert check_budget(budget) == budget

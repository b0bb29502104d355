"""Input rules of a context request: nothing is read for a bad one."""

from __future__ import annotations

from strata.errors import ValidationError

MIN_BUDGET = 50
MAX_BUDGET = 20_000
MAX_TASK_CHARS = 4_000


def check_task(task: object) -> str:
    """The task text, stripped; empty, huge or binary text is refused."""
    if not isinstance(task, str):
        raise ValidationError("the task must be text", field="task")
    text = task.strip()
    if not text:
        raise ValidationError("the task is empty", field="task")
    if len(text) > MAX_TASK_CHARS:
        raise ValidationError(
            f"the task is {len(text)} characters; at most {MAX_TASK_CHARS}",
            field="task",
            limit=MAX_TASK_CHARS,
        )
    if "\x00" in text or sum(not (c.isprintable() or c in "\n\t\r") for c in text) > 0:
        raise ValidationError("the task holds control or binary characters", field="task")
    return text


def check_budget(budget: object) -> int:
    """A token budget within MIN_BUDGET..MAX_BUDGET."""
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise ValidationError("the budget must be a whole number of tokens", field="budget")
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise ValidationError(
            f"budget {budget} is outside {MIN_BUDGET}..{MAX_BUDGET} tokens",
            field="budget",
            min=MIN_BUDGET,
            max=MAX_BUDGET,
        )
    return budget

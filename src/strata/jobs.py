"""Job contracts shared by the API (which sends tasks by name) and the workers.

The API never imports worker code: it builds one of these payloads, and sends
``TASK_NAMES[...]`` with ``payload.model_dump(mode="json")`` to the layer's
queue. Workers validate the same model on receipt.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from strata.errors import ValidationError

Layer = Literal["code", "knowledge", "trace"]

PING: Final = "strata.ops.ping"


class Job(BaseModel):
    """Base of every task payload: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


J = TypeVar("J", bound=Job)


def parse_job(model: type[J], payload: Any) -> J:
    """Validate a task payload; a bad one is a ValidationError with a readable message."""
    try:
        return model.model_validate(payload)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(payload)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ValidationError(f"invalid {model.__name__}: {problems}") from None


class PingJob(Job):
    """Round trip through the queue; the worker echoes ``payload``."""

    payload: str = Field(default="ping", max_length=200)

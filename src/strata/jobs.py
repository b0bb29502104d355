"""Job contracts shared by the API (which sends tasks by name) and the workers.

The API never imports worker code: it builds one of these payloads, and sends
``TASK_NAMES[...]`` with ``payload.model_dump(mode="json")`` to the layer's
queue. Workers validate the same model on receipt.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

Layer = Literal["code", "knowledge", "trace"]

PING: Final = "strata.ops.ping"


class Job(BaseModel):
    """Base of every task payload: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class PingJob(Job):
    """Round trip through the queue; the worker echoes ``payload``."""

    payload: str = Field(default="ping", max_length=200)

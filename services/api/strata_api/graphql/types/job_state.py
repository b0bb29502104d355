"""Where a job is in its life."""

from __future__ import annotations

from enum import Enum

import strawberry


@strawberry.enum(description="Where a job is in its life.")
class JobState(Enum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"

"""The as-of position every read accepts."""

from __future__ import annotations

from datetime import datetime

import strawberry

from strata.temporal import AsOf


@strawberry.input(description="Read the graph as of a valid time and a known (transaction) time.")
class AsOfInput:
    valid_at: datetime | None = strawberry.field(
        default=None, description="When the facts were true in the world (default: now)."
    )
    known_at: datetime | None = strawberry.field(
        default=None, description="What Strata believed at this time (default: now)."
    )

    @staticmethod
    def resolve(value: AsOfInput | None) -> AsOf:
        """The domain as-of pair (naive datetimes are refused with a clear error)."""
        if value is None:
            return AsOf.at()
        return AsOf.at(value.valid_at, value.known_at)

"""Operational fields: the release serving the API."""

from __future__ import annotations

import strawberry

import strata


@strawberry.type
class OpsQuery:
    @strawberry.field(description="The Strata release serving this API.")
    def version(self) -> str:
        return strata.__version__

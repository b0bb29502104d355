"""A registered, indexed repository and its refs."""

from __future__ import annotations

from collections.abc import Sequence

import strawberry

from strata.code.reads import BranchView
from strata_api.graphql.types.branch import Branch


@strawberry.type(description="A registered, indexed repository.")
class Repository:
    name: str
    branches: list[Branch]

    @classmethod
    def from_domain(cls, name: str, views: Sequence[BranchView]) -> Repository:
        return cls(name=name, branches=[Branch.from_domain(b) for b in views])

"""A repository registration as an admin sees it (never its webhook secret)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from strata.registry import RepoRegistration
from strata_api.graphql.types.git_provider import GitProvider


@strawberry.type(description="A registered repository (its webhook secret is never returned).")
class RepositoryRegistration:
    name: str
    provider: GitProvider
    default_branch: str
    url: str | None
    path: str | None
    webhook_path: str = strawberry.field(description="Where the git host should POST pushes.")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_domain(cls, reg: RepoRegistration) -> RepositoryRegistration:
        return cls(
            name=reg.name,
            provider=GitProvider(reg.provider),
            default_branch=reg.default_branch,
            url=reg.url,
            path=reg.path,
            webhook_path=reg.webhook_path,
            created_at=reg.created_at,
            updated_at=reg.updated_at,
        )

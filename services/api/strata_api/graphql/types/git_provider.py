"""The git host that sends a repository's webhooks."""

from __future__ import annotations

from enum import Enum

import strawberry


@strawberry.enum(description="The git host that sends a repository's webhooks.")
class GitProvider(Enum):
    GITHUB = "github"
    GITLAB = "gitlab"
    GITEA = "gitea"
    BITBUCKET = "bitbucket"

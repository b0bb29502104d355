"""A fact a model extracted from a document (graphiti), with its four times."""

from __future__ import annotations

from datetime import datetime

import strawberry

from strata.knowledge.facts import FactView


@strawberry.type(description="A fact a model extracted from a document, with its four times.")
class Fact:
    id: strawberry.ID = strawberry.field(description="graphiti's edge uuid.")
    repository: str
    relation: str = strawberry.field(description="The relation's name, e.g. USES_BROKER.")
    fact: str = strawberry.field(description="The fact as a sentence (clipped).")
    source: str = strawberry.field(description="The entity the fact starts at.")
    target: str = strawberry.field(description="The entity the fact points to.")
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None = strawberry.field(
        description="When Strata learned the fact stopped being true (graphiti closes facts "
        "in place and keeps them)."
    )
    episode: str | None = strawberry.field(description="The graphiti episode it came from.")
    document: str | None = strawberry.field(description="The document's path in the repository.")
    score: float = strawberry.field(description="Full-text relevance.")

    @classmethod
    def from_domain(cls, view: FactView) -> Fact:
        return cls(
            id=strawberry.ID(view.uuid),
            repository=view.repo,
            relation=view.name,
            fact=view.fact,
            source=view.source,
            target=view.target,
            valid_at=view.valid_at,
            invalid_at=view.invalid_at,
            created_at=view.created_at,
            expired_at=view.expired_at,
            episode=view.episode_uuid,
            document=view.document_path,
            score=view.score,
        )

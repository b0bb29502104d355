"""Facts extracted from documents (graphiti), and queueing document ingestion.

``facts`` searches the extracted facts of the repositories the caller may read,
as of a moment; each answer carries its four times and the document (episode)
it came from. ``ingest_documents`` (the ``ingestDocuments`` mutation, in
``mutations.py``) records a job and sends ``strata.knowledge.ingest`` to the
knowledge queue. Neither imports graphiti: the API runs without the
``knowledge`` extra.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from strata.knowledge.facts import FactView, search_facts
from strata_api.graphql.code import _page, _principal, _timeout
from strata_api.graphql.types.asof import AsOfInput

MAX_QUERY_CHARS = 500


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


@strawberry.type
class KnowledgeQuery:
    @strawberry.field(
        description="Facts extracted from documents that match `query` (full text), in the "
        "repositories you may read (or one of them), as of a moment."
    )
    async def facts(
        self,
        info: Info[Any, Any],
        query: str,
        repository: str | None = None,
        first: int = 5,
        as_of: AsOfInput | None = None,
    ) -> list[Fact]:
        first = _page(info, first)
        readable = _principal(info).readable_repos()
        if repository is not None and repository not in readable:
            return []
        views = await asyncio.to_thread(
            search_facts,
            info.context.gateway,
            query[:MAX_QUERY_CHARS],
            AsOfInput.resolve(as_of),
            readable=readable,
            repository=repository,
            first=first,
            timeout=_timeout(info),
        )
        return [Fact.from_domain(v) for v in views]


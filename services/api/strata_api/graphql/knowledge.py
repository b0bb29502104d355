"""Facts extracted from documents (graphiti), and queueing document ingestion.

``facts`` searches the extracted facts of the repositories the caller may read,
as of a moment; each answer carries its four times and the document (episode)
it came from. ``ingest_documents`` (the ``ingestDocuments`` mutation, in
``mutations.py``) records a job and sends ``strata.knowledge.ingest`` to the
knowledge queue. Neither imports graphiti: the API runs without the
``knowledge`` extra.
"""

from __future__ import annotations

import strawberry

from strata.knowledge.facts import search_facts
from strata_api.graphql.context import Info
from strata_api.graphql.types.asof import AsOfInput
from strata_api.graphql.types.fact import Fact

MAX_QUERY_CHARS = 500


@strawberry.type
class KnowledgeQuery:
    @strawberry.field(
        description="Facts extracted from documents that match `query` (full text), in the "
        "repositories you may read (or one of them), as of a moment."
    )
    async def facts(
        self,
        info: Info,
        query: str,
        repository: str | None = None,
        first: int = 5,
        as_of: AsOfInput | None = None,
    ) -> list[Fact]:
        context = info.context
        first = context.page(first)
        readable = context.principal.readable_repos()
        if repository is not None and repository not in readable:
            return []
        views = await context.run(
            search_facts,
            context.gateway,
            query[:MAX_QUERY_CHARS],
            AsOfInput.resolve(as_of),
            readable=readable,
            repository=repository,
            first=first,
        )
        return [Fact.from_domain(v) for v in views]

"""Search results: hits with why they matched and where they come from."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import strawberry

from strata.search.service import RETRIEVERS
from strata.search.service import SearchHit as HitView
from strata.search.service import SearchResult as ResultView
from strata.search.text import check_first
from strata_api.graphql.cost import MAX_ITEMS
from strata_api.graphql.types.evidence import Evidence

DEFAULT_FIRST = 10


@strawberry.type(description="One retriever that found the hit: its rank (1 = best) and score.")
class SearchMatch:
    retriever: str = strawberry.field(
        description="name, fulltext, coverage (the query words a file holds), vector or graph."
    )
    rank: int
    score: float
    via: str | None = strawberry.field(
        description="graph: the relationship and strong hit this one neighbours."
    )


@strawberry.type(description="A search hit: an entity as of the requested moment.")
class SearchHit:
    id: strawberry.ID
    label: str = strawberry.field(description="Symbol, File, Requirement or Decision.")
    kind: str
    name: str
    qualified_name: str
    repository: str
    ref: str | None
    score: float = strawberry.field(description="Fused reciprocal-rank score (k = 60).")
    summary: str | None
    matches: list[SearchMatch] = strawberry.field(metadata={MAX_ITEMS: len(RETRIEVERS)})
    evidence: Evidence

    @classmethod
    def from_domain(cls, hit: HitView) -> SearchHit:
        return cls(
            id=strawberry.ID(hit.key),
            label=hit.label,
            kind=hit.kind,
            name=hit.name,
            qualified_name=hit.qualified_name,
            repository=hit.repo,
            ref=hit.ref,
            score=hit.score,
            summary=hit.summary,
            matches=[
                SearchMatch(retriever=m.retriever, rank=m.rank, score=m.score, via=m.via)
                for m in hit.matches
            ],
            evidence=Evidence(
                path=hit.evidence.path,
                line_start=hit.evidence.line_start,
                line_end=hit.evidence.line_end,
                commit=hit.evidence.commit,
            ),
        )


@strawberry.type(
    description=(
        "A file ranked for the query: its own and its symbols' fused scores, fused "
        "with how many of the query's words it holds (which file would a change touch)."
    )
)
class SearchFile:
    path: str
    score: float = strawberry.field(description="Fused reciprocal-rank score (k = 60).")
    hit_ids: list[strawberry.ID] = strawberry.field(
        description="Its best hits (the file or its symbols), best first, at most 5.",
        metadata={MAX_ITEMS: 5},
    )


@strawberry.type(
    description=(
        "Hybrid search results, and what the search could not see. The search runs once "
        "`hits(first:)` is asked for (its page size); the other fields describe that run."
    )
)
class SearchResult:
    query: str
    repository: str
    run: strawberry.Private[Callable[[int], Awaitable[ResultView]]]
    runs: strawberry.Private[dict[int, asyncio.Task[ResultView]]]

    @classmethod
    def lazy(
        cls, query: str, repository: str, run: Callable[[int], Awaitable[ResultView]]
    ) -> SearchResult:
        return cls(query=query, repository=repository, run=run, runs={})

    async def _result(self, first: int | None = None) -> ResultView:
        # Sibling fields resolve concurrently: they share the run `hits` started.
        if first is None:
            first = next(iter(self.runs), DEFAULT_FIRST)
        if first not in self.runs:
            self.runs[first] = asyncio.ensure_future(self.run(first))
        return await self.runs[first]

    @strawberry.field(description="The best hits, best first (1 to 50).")
    async def hits(self, first: int = DEFAULT_FIRST) -> list[SearchHit]:
        return [SearchHit.from_domain(h) for h in (await self._result(first)).hits]

    @strawberry.field(
        description="The files the hits fall in, best first (1 to 50), from the same run."
    )
    async def files(self, first: int = DEFAULT_FIRST) -> list[SearchFile]:
        first = check_first(first)  # also refused by the search resolver, before any run
        ranked = (await self._result()).files[:first]
        return [
            SearchFile(path=f.path, score=f.score, hit_ids=[strawberry.ID(k) for k in f.keys])
            for f in ranked
        ]

    @strawberry.field(
        description="The retrievers that ran: name, fulltext, coverage, vector, graph."
    )
    async def retrievers(self) -> list[str]:
        return list((await self._result()).retrievers)

    @strawberry.field(
        description="Documents not embedded yet: the vector retriever could not see them."
    )
    async def pending_embeddings(self) -> int:
        return (await self._result()).pending_embeddings

    @strawberry.field(description="What the search could not do or see.")
    async def notes(self) -> list[str]:
        return list((await self._result()).notes)

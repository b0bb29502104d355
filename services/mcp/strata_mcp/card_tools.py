"""The `cards`, `lint` and `review_card` tools: a repository's knowledge cards (and review
queue), its lint, and a reviewer's decision on a queued card (write scope), on the same key
checks as every tool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from strata.cards import CardService, Staleness
from strata.cards.lint import lint_repository
from strata.cards.model import Card
from strata.cards.review import decide
from strata.security import Principal

if TYPE_CHECKING:
    from strata_mcp.server import Core


class CardOut(BaseModel):
    name: str
    package: str = Field(description="The package's path ('.' for the root)")
    commit: str
    fingerprint: str
    stale: bool = Field(description="Its sources changed since it was compiled")
    status: str | None = Field(description="Model prose: published, needs_review, prose_failed")
    review_reasons: list[str]
    markdown: str = Field(description="The card (YAML frontmatter and sections), gate-checked")

    @classmethod
    def of(cls, card: Card, staleness: Staleness) -> CardOut:
        return cls(
            name=card.name,
            package=card.package,
            commit=card.commit,
            fingerprint=card.fingerprint,
            stale=staleness.stale,
            status=card.status,
            review_reasons=list(card.review.reasons) if card.review is not None else [],
            markdown=card.markdown,
        )


class CardsOut(BaseModel):
    repository: str
    cards: list[CardOut]


class LintOut(BaseModel):
    repository: str
    ok: bool
    report: dict[str, Any] = Field(
        description="Metrics and findings, as `strata lint --format json`"
    )


def register_card_tools(
    mcp: MCPServer,
    core: Core,
    who: Callable[[Context], Awaitable[Principal]],
    run: Callable[..., Awaitable[Any]],
) -> None:
    """Register `cards`, `lint` and `review_card` on ``mcp``."""
    timeout = core.settings.request_timeout_s
    service = CardService(core.gateway, core.ontology)

    @mcp.tool(
        description=(
            "The knowledge cards of a repository (one per package, every structural claim "
            "checked against the graph), each with whether it is stale; needs_review: true "
            "is the review queue (model prose that failed the gate)."
        )
    )
    async def cards(
        repository: Annotated[str, Field(min_length=1, max_length=200)],
        ctx: Context,
        needs_review: bool | None = None,
    ) -> CardsOut:
        principal = await who(ctx)
        if not principal.can_read(repository):
            return CardsOut(repository=repository, cards=[])
        found = await run(service.with_staleness, repository, timeout=timeout)
        return CardsOut(
            repository=repository,
            cards=[
                CardOut.of(card, staleness)
                for card, staleness in found
                if needs_review is None or (card.status == "needs_review") == needs_review
            ],
        )

    @mcp.tool(
        description=(
            "Lint a repository's knowledge: contradictions, stale card claims, links into "
            "vanished symbols, requirements without links, stale cards, the review queue."
        )
    )
    async def lint(
        repository: Annotated[str, Field(min_length=1, max_length=200)], ctx: Context
    ) -> LintOut:
        principal = await who(ctx)
        principal.require("read", repository)
        report = await run(
            lint_repository, core.gateway, core.ontology, repository, timeout=timeout
        )
        return LintOut(repository=repository, ok=report.ok, report=report.to_json())

    @mcp.tool(
        description=(
            "Decide on a card in the review queue (write scope): approve publishes its "
            "queued draft as a new version of the card (only when the exact gate passes it "
            "again), reject keeps the card without it. Who, when and why are recorded."
        )
    )
    async def review_card(
        repository: Annotated[str, Field(min_length=1, max_length=200)],
        package: Annotated[str, Field(min_length=1, max_length=500)],
        decision: Literal["approve", "reject"],
        ctx: Context,
        note: Annotated[str, Field(max_length=2000)] = "",
    ) -> CardOut:
        principal = await who(ctx)
        principal.require("write", repository)
        card = await run(
            decide,
            service,
            repository,
            package,
            "approved" if decision == "approve" else "rejected",
            by=f"key:{principal.key_id}",
            note=note,
        )
        return CardOut.of(card, Staleness())

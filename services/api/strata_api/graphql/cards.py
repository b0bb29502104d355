"""The ``card`` and ``cards`` queries: a repository's knowledge cards, as of a moment; the
``approveCard`` and ``rejectCard`` mutations: a reviewer's decision on the review queue
(write scope on the repository, like every write)."""

from __future__ import annotations

import asyncio

import strawberry

from strata.cards import CardService
from strata.cards.lint import lint_repository
from strata.errors import NotFound
from strata_api.graphql.absence import say_why
from strata_api.graphql.context import Info
from strata_api.graphql.types.asof import AsOfInput
from strata_api.graphql.types.cards import Card
from strata_api.graphql.types.lint import LintReport


@strawberry.type
class CardQuery:
    @strawberry.field(description="One package's card (by path or name), as of a moment.")
    async def card(
        self,
        info: Info,
        repository: str,
        package: str,
        ref: str = "main",
        as_of: AsOfInput | None = None,
    ) -> Card | None:
        context = info.context
        when = AsOfInput.resolve(as_of)
        readable = context.principal.can_read(repository)
        found = []
        if readable:
            service = CardService(context.gateway, context.ontology)
            found = await context.run(service.cards, repository, ref, when, package=package)
        if not found:
            missing = NotFound(f"no card of package {package!r} in {repository}/{ref} as of then")
            await say_why(info, repository, when, readable=readable, otherwise=missing)
            return None
        return Card.from_domain(found[0])

    @strawberry.field(
        description=(
            "The current cards of a repository, each with whether its sources changed "
            "since it was compiled; stale: true or false keeps only those. needsReview: true "
            "is the review queue (cards whose model prose failed every draft)."
        )
    )
    async def cards(
        self,
        info: Info,
        repository: str,
        ref: str = "main",
        stale: bool | None = None,
        needs_review: bool | None = None,
    ) -> list[Card]:
        context = info.context
        if not context.principal.can_read(repository):
            await say_why(info, repository, readable=False)
            return []
        service = CardService(context.gateway, context.ontology)
        found = await context.run(service.with_staleness, repository, ref)
        if not found:
            none = NotFound(
                f"no cards of {repository}/{ref} yet", hint="build them: `strata cards build`"
            )
            await say_why(info, repository, otherwise=none)
        return [
            Card.from_domain(card, staleness)
            for card, staleness in found
            if (stale is None or staleness.stale == stale)
            and (needs_review is None or (card.status == "needs_review") == needs_review)
        ]

    @strawberry.field(
        description=(
            "strata lint as of now: contradictions, stale card claims, links into vanished "
            "symbols, requirements without links, stale cards and the review queue."
        )
    )
    async def lint(self, info: Info, repository: str, ref: str = "main") -> LintReport | None:
        context = info.context
        if not context.principal.can_read(repository):
            return None
        report = await context.run(
            lint_repository, context.gateway, context.ontology, repository, ref
        )
        return LintReport.from_domain(report)


@strawberry.type
class CardMutation:
    @strawberry.mutation(
        description=(
            "Approve the queued draft of a card in the review queue (needsReview): it is "
            "published as a new version of the card, once the exact gate passes it again "
            "(a draft with an unsupported structural claim cannot be approved). Write scope."
        )
    )
    async def approve_card(
        self,
        info: Info,
        repository: str,
        package: str,
        ref: str = "main",
        note: str = "",
    ) -> Card:
        return await _decide(info, repository, package, ref, note, approve=True)

    @strawberry.mutation(
        description=(
            "Reject the queued draft of a card in the review queue: the card stays published "
            "without the prose, as a new version that records who, when and why. Write scope."
        )
    )
    async def reject_card(
        self,
        info: Info,
        repository: str,
        package: str,
        ref: str = "main",
        note: str = "",
    ) -> Card:
        return await _decide(info, repository, package, ref, note, approve=False)


async def _decide(
    info: Info, repository: str, package: str, ref: str, note: str, *, approve: bool
) -> Card:
    from strata.cards.review import decide

    context = info.context
    context.principal.require("write", repository)
    service = CardService(context.gateway, context.ontology)
    card = await asyncio.to_thread(
        decide,
        service,
        repository,
        package,
        "approved" if approve else "rejected",
        by=f"key:{context.principal.key_id}",
        ref=ref,
        note=note,
    )
    return Card.from_domain(card)

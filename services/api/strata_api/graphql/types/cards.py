"""Knowledge cards: one package's card, its structural claims and its staleness."""

from __future__ import annotations

from datetime import datetime

import strawberry

from strata.cards import Card as CardView
from strata.cards import Staleness


@strawberry.type(description="One structural claim a card makes (checked by the gate).")
class CardClaim:
    kind: str = strawberry.field(
        description="file, api, doc, depends_on, called_by, entrypoint, test, requirement, "
        "changed, mentions or calls."
    )
    subject: str = strawberry.field(description="The card's package (by name).")
    object: str = strawberry.field(description="A path, path:qualname, package or REQ id.")
    detail: str = strawberry.field(description="The figure or text stated about it, if any.")


@strawberry.type(description="A package's knowledge card, compiled from the graph at a commit.")
class Card:
    repository: str
    ref: str
    package: str = strawberry.field(description="The package's path ('.' for the root).")
    name: str
    commit: str
    valid_at: datetime = strawberry.field(description="The commit's moment: valid from then.")
    generated_at: datetime
    fingerprint: str = strawberry.field(description="A hash over every source it was built from.")
    markdown: str = strawberry.field(description="The card: YAML frontmatter and sections.")
    claims: list[CardClaim]
    stale: bool | None = strawberry.field(
        description="Whether its sources changed since (null: not computed for this read)."
    )
    changed_sources: list[str] = strawberry.field(
        description="Sources changed, added or removed since it was compiled."
    )
    status: str | None = strawberry.field(
        description="Its model prose: published (passed the gate), needs_review (every draft "
        "failed: published without it), prose_failed (the model did not answer), approved "
        "(a reviewer published the queued draft) or rejected (a reviewer kept the card "
        "without it); null: no prose was asked for."
    )
    review_reasons: list[str] = strawberry.field(
        description="Why the last draft failed the gate, or the model's fault."
    )
    draft: str | None = strawberry.field(
        description="The failing draft's markdown, for a reviewer (never the published card)."
    )
    drafts: int = strawberry.field(description="Model drafts it took (1 + redrafts).")
    tokens: int = strawberry.field(description="Model tokens spent on it.")
    cost: float = strawberry.field(description="What those tokens cost.")
    reviewed_by: str | None = strawberry.field(
        description="Who approved or rejected the queued draft (null: nobody yet)."
    )
    reviewed_at: datetime | None = strawberry.field(description="When they decided.")
    review_note: str | None = strawberry.field(description="Why, in the reviewer's words.")

    @classmethod
    def from_domain(cls, card: CardView, staleness: Staleness | None = None) -> Card:
        changed = [*staleness.changed, *staleness.added, *staleness.removed] if staleness else []
        review = card.review
        return cls(
            repository=card.repo,
            ref=card.ref,
            package=card.package,
            name=card.name,
            commit=card.commit,
            valid_at=card.valid_at,
            generated_at=card.generated_at,
            fingerprint=card.fingerprint,
            markdown=card.markdown,
            claims=[
                CardClaim(kind=c.kind, subject=c.subject, object=c.object, detail=c.detail)
                for c in card.claims
            ],
            stale=staleness.stale if staleness is not None else None,
            changed_sources=changed,
            status=card.status,
            review_reasons=list(review.reasons) if review else [],
            draft=(review.draft or None) if review else None,
            drafts=review.drafts if review else 0,
            tokens=review.tokens if review else 0,
            cost=review.cost if review else 0.0,
            reviewed_by=review.reviewed_by if review else None,
            reviewed_at=review.reviewed_at if review else None,
            review_note=(review.note or None) if review else None,
        )

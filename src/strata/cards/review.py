"""A reviewer's decision on a card in the review queue: approve its draft, or reject it.

A card lands in ``needs_review`` when every model draft of its prose failed
(the gate, the judge, or the rule that prose must name something on the card);
it is published without the prose, the last draft kept. A reviewer decides:

- **approve**: the draft is published as the card. The exact gate runs on it
  again at the card's commit, and a draft with a structural claim the graph
  does not support (an invented dependency, a wrong caller) cannot be approved:
  the gate is exact, it is not a reviewer's to waive. What a reviewer overrides
  is the judgement (the model judge's ratio, a draft that names nothing).
- **reject**: the card stays as published, without the prose.

The decision is a fact: a new version of the card at the same commit, with who
decided, when and why; the queued version is expired (transaction time), never
overwritten, so the card reads as queued as of any moment before the decision.
"""

from __future__ import annotations

import dataclasses

import yaml

from strata.cards.gate import check_card, parse_card, split_frontmatter
from strata.cards.model import Card, Decision
from strata.cards.service import CardService
from strata.errors import NotFound, ValidationError
from strata.temporal import now, to_wire

MAX_NOTE = 2000


def decide(
    service: CardService,
    repo: str,
    package: str,
    decision: Decision,
    *,
    by: str,
    ref: str = "main",
    note: str = "",
) -> Card:
    """Record ``by``'s ``decision`` on the queued card of ``package`` (path or name); the
    card as now published. A card not in the queue, a missing reviewer, or a draft the
    exact gate refuses is a :class:`ValidationError`, and nothing is written."""
    if decision not in ("approved", "rejected"):
        raise ValidationError(f"a decision is approved or rejected, not {decision!r}")
    by = by.strip()
    if not by or len(by) > 200:
        raise ValidationError("say who decides (a reviewer's name, 1 to 200 characters)")
    if len(note) > MAX_NOTE:
        raise ValidationError(f"a review note has at most {MAX_NOTE} characters")
    found = service.cards(repo, ref, package=package)
    if not found:
        raise NotFound(f"no current card of package {package!r} in {repo}/{ref}", repo=repo)
    card = found[0]
    review = card.review
    if review is None or review.status != "needs_review":
        status = review.status if review is not None else "no prose asked for"
        raise ValidationError(
            f"the card of {card.name!r} is not waiting for review (status: {status})",
            hint="strata cards review lists the queue",
        )
    at = now()
    published = card
    if decision == "approved":
        published = _approvable(service, card, by, to_wire(at))
    decided = dataclasses.replace(
        review, status=decision, reviewed_by=by, reviewed_at=at, note=note.strip()
    )
    result = dataclasses.replace(published, review=decided)
    service.store.write([result])
    return result


def _approvable(service: CardService, card: Card, by: str, at: str) -> Card:
    """The queued draft as the card to publish, after the exact gate passed it again."""
    draft = card.review.draft if card.review is not None else ""
    if not draft:
        raise ValidationError(f"the card of {card.name!r} keeps no draft to approve")
    candidate = dataclasses.replace(card, markdown=draft, claims=parse_card(draft).claims)
    snap = service.snapshots(card.repo, card.ref).of_card(candidate)
    gate = check_card(candidate, snap)
    if not gate.ok:
        shown = "; ".join(f"{c.kind} {c.object!r}: {why}" for c, why in gate.unsupported[:10])
        raise ValidationError(
            f"the draft of {card.name!r} makes claims the graph does not support at "
            f"{card.commit[:12]}: {shown}",
            hint="the exact gate is not a reviewer's to waive: reject the draft",
            unsupported=[f"{c.kind} {c.object}" for c, _ in gate.unsupported[:50]],
        )
    front, body = split_frontmatter(draft)
    front = {**front, "reviewed_by": by, "reviewed_at": at}
    markdown = "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + body
    return dataclasses.replace(candidate, markdown=markdown)

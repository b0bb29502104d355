"""Cards as knowledge-layer facts: one Card node per package and ref, versioned by commit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from strata.cards.model import Card, Claim, ProseReview
from strata.facts import Source, StateFact
from strata.graph.gateway import Gateway
from strata.graph.store import FactStore, WriteResult
from strata.temporal import AsOf, as_of_predicate, decode_fact, fact_projection
from strata.writers import KnowledgeWriter

_ST = as_of_predicate("st")

CARDS_AS_OF = f"""
MATCH (c:Card {{repo: $repo}})-[st:STATE]->(c)
WHERE {_ST} AND ($ref IS NULL OR c.ref = $ref) AND ($package IS NULL OR c.package = $package
      OR st.name = $package)
RETURN properties(c) AS node, {fact_projection("st")} AS state
ORDER BY c.ref, c.package
LIMIT $limit
"""


class CardStore:
    """Writes cards through the KnowledgeWriter and reads them back as of any time."""

    def __init__(self, gateway: Gateway, store: FactStore) -> None:
        self._gateway = gateway
        self._writer = KnowledgeWriter(store)

    def write(self, cards: Sequence[Card]) -> WriteResult:
        """One batch: each card is a Card state valid from its commit's moment on."""
        facts = [
            self._writer.assert_state(
                "Card",
                _identity(c),
                {
                    "name": c.name,
                    "commit": c.commit,
                    "fingerprint": c.fingerprint,
                    "markdown": c.markdown,
                    "generated_at": c.generated_at,
                    "claims": [claim.to_json() for claim in c.claims],
                    "sources": c.source_lines(),
                    **_review_properties(c.review),
                },
                valid_at=c.valid_at,
                source=Source(commit=c.commit, path=c.package),
                scope=f"card:{c.ref}:{c.package}",
            )
            for c in cards
        ]
        return self._writer.write(facts)

    def close(self, cards: Sequence[Card], at: datetime) -> WriteResult:
        """The cards stop being true at ``at`` (their package vanished at that commit):
        their current state gets ``invalid_at``; read as of before, they read as they were."""
        facts = [
            StateFact.closing("Card", self._writer.ref("Card", **_identity(c)).key, at)
            for c in cards
        ]
        return self._writer.write(facts)

    def read(
        self,
        repo: str,
        as_of: AsOf,
        *,
        ref: str | None = None,
        package: str | None = None,
        limit: int = 1000,
        timeout: float | None = None,
    ) -> list[Card]:
        """The cards of a repository (one package: by path or name) as of a moment."""
        rows = self._gateway.read(
            CARDS_AS_OF,
            repo=repo,
            ref=ref,
            package=package,
            limit=limit,
            timeout=timeout,
            **as_of.params(),
        )
        return [card_of(r["node"], decode_fact(r["state"])) for r in rows]


def _identity(card: Card) -> dict[str, str]:
    return {"repo": card.repo, "ref": card.ref, "package": card.package}


def card_of(node: dict[str, Any], state: dict[str, Any]) -> Card:
    """A stored card back as a :class:`Card`."""
    sources: dict[str, str] = {}
    for line in state.get("sources") or []:
        name, _, digest = str(line).rpartition("=")
        sources[name] = digest
    generated: datetime = state["generated_at"]
    return Card(
        repo=node["repo"],
        ref=node["ref"],
        package=node["package"],
        name=state["name"],
        commit=state["commit"],
        valid_at=state["valid_at"],
        generated_at=generated,
        markdown=state["markdown"],
        claims=tuple(Claim.from_json(c) for c in state.get("claims") or []),
        sources=sources,
        fingerprint=state["fingerprint"],
        review=_review_of(state),
    )


def _review_properties(review: ProseReview | None) -> dict[str, Any]:
    if review is None:
        return {}
    decided = {
        "reviewed_by": review.reviewed_by,
        "reviewed_at": review.reviewed_at,
        "review_note": review.note or None,
    }
    return {
        "status": review.status,
        "review": list(review.reasons),
        "draft": review.draft,
        "drafts": review.drafts,
        "tokens": review.tokens,
        "cost": review.cost,
        **{k: v for k, v in decided.items() if v is not None},
    }


def _review_of(state: dict[str, Any]) -> ProseReview | None:
    if not state.get("status"):
        return None
    return ProseReview(
        status=state["status"],
        reasons=tuple(state.get("review") or ()),
        draft=state.get("draft") or "",
        drafts=int(state.get("drafts") or 0),
        tokens=int(state.get("tokens") or 0),
        cost=float(state.get("cost") or 0.0),
        reviewed_by=state.get("reviewed_by"),
        reviewed_at=state.get("reviewed_at"),
        note=state.get("review_note") or "",
    )

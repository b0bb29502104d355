"""A knowledge card and the structural claims it makes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

ClaimKind = Literal[
    "file",
    "api",
    "doc",
    "depends_on",
    "called_by",
    "entrypoint",
    "test",
    "requirement",
    "changed",
    "mentions",
    "calls",
]


@dataclass(frozen=True, slots=True, order=True)
class Claim:
    """One structural statement of a card, checkable against the graph.

    ``subject`` is the card's package (by name); ``object`` what the claim is
    about (a path, ``path:qualname``, a package name or a requirement id);
    ``detail`` the exact figure or text the card states about it, when it
    states one (dependency counts, an entrypoint's kind, a link's target).
    """

    kind: ClaimKind
    subject: str
    object: str
    detail: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {
                "kind": self.kind,
                "subject": self.subject,
                "object": self.object,
                "detail": self.detail,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Claim:
        data: dict[str, Any] = json.loads(text)
        return cls(data["kind"], data["subject"], data["object"], data.get("detail", ""))


ProseStatus = Literal["published", "needs_review", "prose_failed", "approved", "rejected"]
Decision = Literal["approved", "rejected"]


@dataclass(frozen=True, slots=True)
class ProseReview:
    """How a card's model prose fared: published (it passed the gate), needs_review (every
    draft failed: the card is published without it) or prose_failed (the model could not
    answer: retried by the next run); then a reviewer's decision on a queued draft:
    approved (the draft published) or rejected (the card stays without it)."""

    status: ProseStatus
    reasons: tuple[str, ...] = ()  # why the last draft failed, or the model's fault
    draft: str = ""  # the failing draft's markdown, for a reviewer
    drafts: int = 0
    tokens: int = 0
    cost: float = 0.0
    reviewed_by: str | None = None
    reviewed_at: datetime | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Card:
    """One package's card: its markdown, its claims and what it was compiled from."""

    repo: str
    ref: str
    package: str  # the package's path ("." for the repository root)
    name: str
    commit: str
    valid_at: datetime
    generated_at: datetime
    markdown: str
    claims: tuple[Claim, ...]
    sources: dict[str, str] = field(default_factory=dict)  # "file:path" -> content hash
    fingerprint: str = ""
    review: ProseReview | None = None  # set when a model was asked for prose

    @property
    def status(self) -> str | None:
        """published, needs_review or prose_failed (None: no prose was asked for)."""
        return self.review.status if self.review is not None else None

    def source_lines(self) -> list[str]:
        return [f"{k}={v}" for k, v in sorted(self.sources.items())]

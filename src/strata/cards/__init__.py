"""Knowledge cards: one small structured card per package, compiled from the graph as of a
commit, checked claim by claim against the graph (the exact gate), fingerprinted so a push
re-checks only the cards whose sources changed."""

from strata.cards.compile import compile_card, compile_cards, index_markdown
from strata.cards.fingerprint import Staleness
from strata.cards.gate import GateResult, check_card, parse_card
from strata.cards.graph import Snapshot, load_snapshot
from strata.cards.model import Card, Claim
from strata.cards.service import CardCheck, CardService, export_cards

__all__ = [
    "Card",
    "CardCheck",
    "CardService",
    "Claim",
    "GateResult",
    "Snapshot",
    "Staleness",
    "check_card",
    "compile_card",
    "compile_cards",
    "export_cards",
    "index_markdown",
    "load_snapshot",
    "parse_card",
]

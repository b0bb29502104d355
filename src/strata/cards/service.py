"""Build, store, check and export a repository's cards: what the CLI, API and worker call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from strata.cards.compile import card_filename, compile_cards, index_markdown
from strata.cards.fingerprint import Staleness, diff_sources, sources_of
from strata.cards.gate import GateResult, check_card, split_frontmatter
from strata.cards.graph import Snapshot, load_snapshot
from strata.cards.model import Card, Claim
from strata.cards.owners import owners_of, parse_codeowners, read_codeowners
from strata.cards.store import CardStore
from strata.errors import NotFound, ValidationError
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.store import FactStore
from strata.ontology.model import Ontology
from strata.temporal import AsOf


@dataclass(frozen=True, slots=True)
class CardCheck:
    """One stored card: the gate's verdict at its commit, and what changed since."""

    card: Card
    gate: GateResult
    staleness: Staleness

    @property
    def ok(self) -> bool:
        return self.gate.ok and not self.staleness.stale


class CardService:
    """Cards of one repository and ref, compiled from the graph as of a commit."""

    def __init__(self, gateway: Gateway, ontology: Ontology) -> None:
        self._gateway = gateway
        self.store = CardStore(gateway, FactStore(gateway, ontology))

    def snapshot(
        self, repo: str, ref: str = "main", commit: str | None = None, *, git: Git | None = None
    ) -> Snapshot:
        """The package graph as of ``commit`` (default: the ref's head), owners from git."""
        snap = load_snapshot(self._gateway, repo, ref, commit)
        if git is not None:
            text = read_codeowners(git, snap.commit)
            if text is not None:
                rules = parse_codeowners(text)
                snap.owners = {p: owners_of(p, rules) for p in snap.packages}
        return snap

    def build(
        self,
        repo: str,
        ref: str = "main",
        commit: str | None = None,
        *,
        git: Git | None = None,
        packages: set[str] | None = None,
    ) -> list[Card]:
        """Compile (and store) the cards; ``packages`` limits them to those paths."""
        snap = self.snapshot(repo, ref, commit, git=git)
        cards = [c for c in compile_cards(snap) if packages is None or c.package in packages]
        if cards:
            self.store.write(cards)
        return cards

    def refresh(
        self, repo: str, ref: str = "main", commit: str | None = None, *, git: Git | None = None
    ) -> tuple[list[Card], int]:
        """Rebuild only the cards whose sources changed (or that do not exist yet) as of
        ``commit``, without a model; returns the rebuilt cards and how many were still fresh."""
        from strata.cards.pipeline import CardPipeline  # the pipeline builds on this service

        result = CardPipeline(self).run(repo, ref, commit, git=git)
        return result.rebuilt, result.fresh

    def cards(
        self,
        repo: str,
        ref: str = "main",
        as_of: AsOf | None = None,
        *,
        package: str | None = None,
        timeout: float | None = None,
    ) -> list[Card]:
        """The stored cards as of a moment (default: now); ``package``: by path or name."""
        return self.store.read(repo, as_of or AsOf.at(), ref=ref, package=package, timeout=timeout)

    def needs_review(self, repo: str, ref: str = "main") -> list[Card]:
        """The review queue: current cards whose model prose failed every draft (each is
        published without the prose, which waits here with the reasons)."""
        return [c for c in self.cards(repo, ref) if c.status == "needs_review"]

    def check(self, repo: str, ref: str = "main") -> list[CardCheck]:
        """Gate every stored card at its own commit and diff its sources against the head."""
        cards = self.cards(repo, ref)
        if not cards:
            raise NotFound(f"{repo}/{ref} has no cards", hint="run strata cards build first")
        head = load_snapshot(self._gateway, repo, ref)
        at_commit: dict[str, Snapshot] = {head.commit: head}
        checks = []
        for card in cards:
            snap = at_commit.get(card.commit)
            if snap is None:
                snap = at_commit[card.commit] = load_snapshot(self._gateway, repo, ref, card.commit)
            checks.append(CardCheck(card, check_card(card, snap), self.staleness(card, head)))
        return checks

    def verify(self, repo: str, ref: str, texts: dict[str, str]) -> dict[str, GateResult]:
        """Gate card markdown files (a committed bundle, by file name) against the graph at
        the commit each names, or at the head when that commit is not indexed; a file that
        is no card (no frontmatter) fails with why."""
        head = load_snapshot(self._gateway, repo, ref)
        at_commit: dict[str, Snapshot] = {head.commit: head}
        results: dict[str, GateResult] = {}
        for name, text in sorted(texts.items()):
            try:
                commit = str(split_frontmatter(text)[0]["commit"])
            except ValidationError as exc:
                why = (Claim("mentions", name, "frontmatter"), exc.message)
                results[name] = GateResult(name, 0, (why,))
                continue
            snap = at_commit.get(commit)
            if snap is None:
                try:
                    snap = load_snapshot(self._gateway, repo, ref, commit)
                except NotFound:
                    snap = head
                at_commit[commit] = snap
            results[name] = check_card(text, snap)
        return results

    @staticmethod
    def staleness(card: Card, now: Snapshot) -> Staleness:
        """What changed in the card's sources between its commit and ``now``."""
        if card.package not in now.packages:
            return Staleness(removed=tuple(sorted(card.sources)) or ("package",))
        return diff_sources(card.sources, sources_of(now, card.package))

    def with_staleness(
        self, repo: str, ref: str = "main", *, timeout: float | None = None
    ) -> list[tuple[Card, Staleness]]:
        """Every current card with what changed in its sources since it was compiled."""
        cards = self.cards(repo, ref, timeout=timeout)
        if not cards:
            return []
        head = load_snapshot(self._gateway, repo, ref, timeout=timeout)
        return [(c, self.staleness(c, head)) for c in cards]

    def stale(self, repo: str, ref: str = "main") -> list[tuple[Card, Staleness]]:
        """The stored cards whose sources changed since they were compiled."""
        return [(c, s) for c, s in self.with_staleness(repo, ref) if s.stale]


def export_cards(cards: list[Card], directory: Path) -> list[Path]:
    """Write each card's markdown and the repository's index.md into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for card in cards:
        target = directory / card_filename(card)
        target.write_text(card.markdown)
        written.append(target)
    if cards:
        index = directory / "index.md"
        index.write_text(index_markdown(cards[0].repo, cards[0].commit, cards))
        written.append(index)
    return written

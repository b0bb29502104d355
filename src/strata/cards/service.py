"""Build, store, check and export a repository's cards: what the CLI, API and worker call."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from strata.cards.boundaries import NO_MAP, PathMap, read_path_map, recorded_map
from strata.cards.compile import card_filename, compile_card, index_markdown
from strata.cards.fingerprint import Staleness, diff_sources, sources_of
from strata.cards.gate import GateResult, check_card, split_frontmatter
from strata.cards.graph import Snapshot, load_detail, load_skeleton, resolve_commit
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


class Snapshots:
    """Snapshots of one repository and ref read once per (commit, path map), each with the
    detail of the packages asked for so far (checking a card reads only its package)."""

    def __init__(
        self, gateway: Gateway, repo: str, ref: str, *, timeout: float | None = None
    ) -> None:
        self._gateway = gateway
        self.repo = repo
        self.ref = ref
        self._timeout = timeout
        self._cache: dict[tuple[str | None, PathMap], Snapshot] = {}

    def at(
        self, commit: str | None, boundaries: PathMap = NO_MAP, package: str | None = None
    ) -> Snapshot:
        """The snapshot at ``commit`` (None: the head) grouped by ``boundaries``, with the
        detail of ``package`` (by path or name) when one is given."""
        key = (commit, boundaries)
        snap = self._cache.get(key)
        if snap is None:
            snap = load_skeleton(
                self._gateway,
                self.repo,
                self.ref,
                commit,
                boundaries=boundaries,
                timeout=self._timeout,
            )
            self._cache[key] = self._cache[(snap.commit, boundaries)] = snap
        if package is not None:
            path = snap.package_by_name(package)
            if path is not None:
                load_detail(self._gateway, snap, {path}, timeout=self._timeout)
        return snap

    def of_card(self, card: Card, *, head: bool = False) -> Snapshot:
        """The snapshot a card is checked against: at its commit (or the head), grouped by
        the path map it was compiled under, with its package's detail."""
        front = split_frontmatter(card.markdown)[0]
        return self.at(None if head else card.commit, recorded_map(front), card.package)


class CardService:
    """Cards of one repository and ref, compiled from the graph as of a commit."""

    def __init__(self, gateway: Gateway, ontology: Ontology) -> None:
        self._gateway = gateway
        self.store = CardStore(gateway, FactStore(gateway, ontology))

    @property
    def gateway(self) -> Gateway:
        return self._gateway

    def snapshots(self, repo: str, ref: str = "main", *, timeout: float | None = None) -> Snapshots:
        return Snapshots(self._gateway, repo, ref, timeout=timeout)

    def snapshot(
        self,
        repo: str,
        ref: str = "main",
        commit: str | None = None,
        *,
        git: Git | None = None,
        packages: set[str] | None = None,
        boundaries: PathMap = NO_MAP,
    ) -> Snapshot:
        """The package graph as of ``commit`` (default: the ref's head), grouped by the path
        map at that commit (read with ``git``; without a clone: ``boundaries``), owners from
        CODEOWNERS or the map; the detail of ``packages`` only (None: of every package)."""
        sha, _ = resolve_commit(self._gateway, repo, ref, commit)
        path_map = read_path_map(git, sha) if git is not None else boundaries
        snap = load_skeleton(self._gateway, repo, ref, sha, boundaries=path_map)
        if git is not None:
            text = read_codeowners(git, snap.commit)
            if text is not None:
                rules = parse_codeowners(text)
                snap.owners = {p: owners_of(p, rules) for p in snap.packages}
        for entry in path_map.entries:
            if entry.owners is not None and entry.path in snap.packages:
                snap.owners[entry.path] = list(entry.owners)
        load_detail(self._gateway, snap, packages)
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
        """Compile (and store) the cards; ``packages`` limits them to those paths. Without a
        clone, the path map the stored cards were compiled under is kept."""
        kept = recorded_boundaries(self.cards(repo, ref)) if git is None else NO_MAP
        snap = self.snapshot(repo, ref, commit, git=git, packages=packages, boundaries=kept)
        cards = [compile_card(snap, p) for p in sorted(snap.packages) if snap.has_detail(p)]
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
        snaps = self.snapshots(repo, ref)
        return [
            CardCheck(
                card,
                check_card(card, snaps.of_card(card)),
                self.staleness(card, snaps.of_card(card, head=True)),
            )
            for card in cards
        ]

    def verify(self, repo: str, ref: str, texts: dict[str, str]) -> dict[str, GateResult]:
        """Gate card markdown files (a committed bundle, by file name) against the graph at
        the commit each names, or at the head when that commit is not indexed; a file that
        is no card (no frontmatter) fails with why."""
        snaps = self.snapshots(repo, ref)
        results: dict[str, GateResult] = {}
        for name, text in sorted(texts.items()):
            try:
                front = split_frontmatter(text)[0]
            except ValidationError as exc:
                why = (Claim("mentions", name, "frontmatter"), exc.message)
                results[name] = GateResult(name, 0, (why,))
                continue
            boundaries, package = recorded_map(front), str(front["package"])
            try:
                snap = snaps.at(str(front["commit"]), boundaries, package)
            except NotFound:
                snap = snaps.at(None, boundaries, package)
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
        """Every current card with what changed in its sources since it was compiled (the
        head's skeleton is enough: no symbol is read)."""
        cards = self.cards(repo, ref, timeout=timeout)
        if not cards:
            return []
        snaps = self.snapshots(repo, ref, timeout=timeout)
        heads = [snaps.at(None, recorded_map(split_frontmatter(c.markdown)[0])) for c in cards]
        return [(c, self.staleness(c, head)) for c, head in zip(cards, heads, strict=True)]

    def stale(self, repo: str, ref: str = "main") -> list[tuple[Card, Staleness]]:
        """The stored cards whose sources changed since they were compiled."""
        return [(c, s) for c, s in self.with_staleness(repo, ref) if s.stale]


def recorded_boundaries(cards: Iterable[Card]) -> PathMap:
    """The path map stored cards were compiled under (what a run without a clone keeps;
    with one, the map at the commit wins)."""
    for card in cards:
        recorded = recorded_map(split_frontmatter(card.markdown)[0])
        if recorded:
            return recorded
    return NO_MAP


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

"""What a card was compiled from, as content hashes, and whether that changed since.

A card's sources are its package's files (their content hash covers every
symbol body and docstring in them), the texts of the requirements linked into
it, its cross-package dependency counts in both directions (a change in
another package that adds or drops an import of this one changes this card),
and the path map its packages were grouped by, if any.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from strata.cards.graph import Snapshot


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sources_of(snap: Snapshot, package: str) -> dict[str, str]:
    """The content hashes a card of ``package`` is compiled from, as of the snapshot."""
    files = snap.files.get(package, {})
    found = {f"file:{path}": digest for path, digest in files.items()}
    found.update(snap.boundaries.sources())
    for link in snap.links:
        if snap.package_of.get(link.target.rsplit(":", 1)[0]) == package:
            found[f"req:{link.req_id}"] = text_hash(link.text)
    for (src, dst), n in snap.imports.items():
        if src == package:
            found[f"imports:out:{dst}"] = str(n)
        if dst == package:
            found[f"imports:in:{src}"] = str(n)
    for (src, dst), n in snap.calls.items():
        if src == package:
            found[f"calls:out:{dst}"] = str(n)
        if dst == package:
            found[f"calls:in:{src}"] = str(n)
    return found


def fingerprint(sources: dict[str, str]) -> str:
    """One hash over the sorted sources: equal fingerprints, equal inputs."""
    return text_hash("\n".join(f"{k}={v}" for k, v in sorted(sources.items())))


@dataclass(frozen=True, slots=True)
class Staleness:
    """How a card's sources differ from the graph now (empty: still fresh)."""

    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def stale(self) -> bool:
        return bool(self.changed or self.added or self.removed)


def diff_sources(recorded: dict[str, str], current: dict[str, str]) -> Staleness:
    """Which recorded sources changed, appeared or vanished."""
    return Staleness(
        changed=tuple(sorted(k for k in recorded if k in current and current[k] != recorded[k])),
        added=tuple(sorted(k for k in current if k not in recorded)),
        removed=tuple(sorted(k for k in recorded if k not in current)),
    )

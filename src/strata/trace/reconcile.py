"""What a sync writes: each settled link against the version the graph holds now.

- A link whose content equals its open version writes nothing (a push that
  changes nothing about a link leaves it alone).
- A link whose content changed is a change in the world: the open version is
  closed in valid time at the moment of the change and the new one opens there
  (a target vanished: when it vanished; anything else: the synced commit's time).
  Only a declared link whose ``date`` was edited is a correction of the record,
  written over its whole interval (the store expires what it replaces).
- An open link of a re-synced scope that the sync no longer produces is closed
  at the commit's time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata.facts import EdgeFact, Fact, NodeRef, Source
from strata.graph.gateway import Gateway, checked_label, checked_rel_type
from strata.temporal import content_hash, native
from strata.trace.link import LINK_TYPES, Link

# Every open link of the repository, in current belief, with its content.
OPEN_LINKS = "\nUNION ALL\n".join(
    f"""
MATCH (q)-[r:{rel}]->(t)
WHERE r.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN '{rel}' AS type, labels(q)[0] AS src_label, q.key AS src, labels(t)[0] AS dst_label,
       t.key AS dst, properties(r) AS props
"""
    for rel in LINK_TYPES
)

# When each returning slot (no open version) last stopped being true, in current belief.
LAST_ENDED = """
UNWIND $rows AS row
MATCH (q:{src} {{key: row.src}})-[r:{rel}]->(t:{dst} {{key: row.dst}})
WHERE r.expired_at IS NULL AND r.invalid_at IS NOT NULL
RETURN row.src AS src, row.dst AS dst, max(r.invalid_at) AS ended
"""

Slot = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class OpenLink:
    """The current version of one link slot."""

    rel: str
    src: NodeRef
    dst: NodeRef
    props: dict[str, Any]

    @property
    def slot(self) -> Slot:
        return (self.rel, self.src.key, self.dst.key)

    @property
    def scope(self) -> str:
        return str(self.props.get("scope") or "")

    @property
    def valid_at(self) -> datetime:
        value: datetime = native(self.props["valid_at"])
        return value


def open_links(gateway: Gateway, repo: str) -> dict[Slot, OpenLink]:
    """The repository's open links by slot (one read per sync)."""
    found: dict[Slot, OpenLink] = {}
    for row in gateway.read(OPEN_LINKS, repo=repo):
        link = OpenLink(
            row["type"],
            NodeRef(row["src_label"], row["src"]),
            NodeRef(row["dst_label"], row["dst"]),
            dict(row["props"]),
        )
        found[link.slot] = link
    return found


def ended_slots(
    gateway: Gateway, links: list[Link], current: dict[Slot, OpenLink]
) -> dict[Slot, datetime]:
    """For links without an open version: when an earlier version of the slot ended."""
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for link in links:
        if link.slot not in current:
            groups.setdefault((link.rel, link.src.label, link.dst.label), []).append(
                {"src": link.src.key, "dst": link.dst.key}
            )
    out: dict[Slot, datetime] = {}
    for (rel, src, dst), rows in sorted(groups.items()):
        text = LAST_ENDED.format(
            rel=checked_rel_type(rel), src=checked_label(src), dst=checked_label(dst)
        )
        for row in gateway.read(text, rows=rows):
            out[(rel, row["src"], row["dst"])] = native(row["ended"])
    return out


def reconcile(
    repo: str,
    settled: list[Link],
    current: dict[Slot, OpenLink],
    scopes: set[str],
    *,
    at: datetime,
    ended: dict[Slot, datetime] | None = None,
) -> tuple[list[Fact], int]:
    """The facts to write for ``settled`` and the re-synced ``scopes``, and how many
    links were left alone because nothing about them changed.

    ``ended``: slots without an open version that were true before (a link
    removed, then declared again): they return from ``at``, not from their
    original start, which would rewrite the time they were gone.
    """
    facts: list[Fact] = []
    kept: set[Slot] = set()
    unchanged = 0
    for link in settled:
        kept.add(link.slot)
        previous = current.get(link.slot)
        if previous is None:
            back = (ended or {}).get(link.slot)
            start = link.valid_at if back is None else max(link.valid_at, back, at)
            facts.append(_fact(repo, link, start))
            continue
        if content_hash(link.props) == previous.props.get("hash"):
            unchanged += 1
            continue
        facts.append(_fact(repo, link, _change_time(link, previous, at)))
    for slot, previous in sorted(current.items()):
        if slot in kept or previous.scope not in scopes:
            continue
        facts.append(
            EdgeFact(previous.rel, previous.src, previous.dst, repo, None, at, change="invalidate")
        )
    return facts, unchanged


def _change_time(link: Link, previous: OpenLink, at: datetime) -> datetime:
    """When the link's content changed in the world (see the module docstring)."""
    declared = "link_date" in link.props or "link_date" in previous.props
    if declared and _date(link.props.get("link_date")) != _date(previous.props.get("link_date")):
        return link.valid_at  # the recorded start was wrong: a correction
    moment = at
    if link.props.get("status") == "STALE" and previous.props.get("status") != "STALE":
        moment = link.valid_at  # settle dates a STALE link from when its target vanished
    # Never before the version it closes (same instant: that version is replaced).
    return max(moment, previous.valid_at)


def _date(value: Any) -> datetime | None:
    return native(value) if value is not None else None


def _fact(repo: str, link: Link, valid_at: datetime) -> EdgeFact:
    return EdgeFact(
        link.rel,
        link.src,
        link.dst,
        repo,
        link.props,
        valid_at,
        source=link.source,
        scope=link.scope,
    )


def carried_source(previous: OpenLink) -> Source:
    """The provenance of an open link carried into this sync."""
    return Source(commit=previous.props.get("source_commit"))

"""Compile one card per package from a graph snapshot: markdown plus claims.

Every structural line the card renders is produced together with the claim it
makes, so the claims recorded next to the text are exactly what the text
says; :mod:`strata.cards.gate` parses them back out of the markdown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import yaml

from strata.cards.fingerprint import fingerprint, sources_of
from strata.cards.graph import Snapshot, SymbolRow
from strata.cards.model import Card, Claim
from strata.temporal import now, to_wire

CAP = 40  # entries per section: a card stays small (and under the store's string limit)
CHANGES = 8

SECTIONS = {
    "purpose": "Purpose",
    "api": "Public API",
    "depends_on": "Depends on",
    "called_by": "Used by",
    "entrypoint": "Entrypoints",
    "test": "Tests",
    "requirement": "Requirements",
    "owners": "Owners",
    "file": "Files",
    "changed": "Recent changes",
}


def first_line(text: str | None) -> str:
    """A docstring's first non-empty line, without backticks (prose is not a claim)."""
    for line in (text or "").strip().splitlines():
        if line.strip():
            return line.strip().replace("`", "'")[:200]
    return ""


def dep_detail(imports: int, calls: int) -> str:
    return f"imports {imports}, calls {calls}"


def compile_cards(snap: Snapshot, *, generated_at: datetime | None = None) -> list[Card]:
    """One card per package of the snapshot, in package-path order."""
    at = generated_at or now()
    return [compile_card(snap, path, generated_at=at) for path in sorted(snap.packages)]


def compile_card(snap: Snapshot, package: str, *, generated_at: datetime | None = None) -> Card:
    """The card of one package (by path) as of the snapshot's commit."""
    at = generated_at or now()
    row = snap.packages[package]
    name = row.name
    claims: list[Claim] = []
    body: list[str] = [f"# {name}", "", f"{row.ecosystem} package at `{package}`"]
    claims.append(Claim("mentions", name, package))

    def section(key: str, items: Sequence[tuple[str, Claim | None]]) -> None:
        body.extend(["", f"## {SECTIONS[key]}", ""])
        if not items:
            body.append("(none)")
        for text, claim in items[:CAP]:
            body.append(f"- {text}")
            if claim is not None:
                claims.append(claim)
        if len(items) > CAP:
            body.append(f"(and {len(items) - CAP} more)")

    symbols = snap.symbols_of(package)
    files = sorted(snap.files.get(package, {}))
    public = [s for s in symbols if _public(s) and s.path not in snap.tests and not s.test]
    section(
        "purpose",
        [
            (f"`{s.ref}`: {line}", Claim("doc", name, s.ref, line))
            for s in public
            if (line := first_line(s.docstring))
        ][:5],
    )
    section("api", [(f"`{s.ref}` ({s.kind})", Claim("api", name, s.ref, s.kind)) for s in public])
    section("depends_on", _deps(snap, package, name, "depends_on", lambda k: k[0] == package))
    section("called_by", _deps(snap, package, name, "called_by", lambda k: k[1] == package))
    section(
        "entrypoint",
        [
            (f"`{s.ref}`: {s.entrypoint}", Claim("entrypoint", name, s.ref, s.entrypoint or ""))
            for s in symbols
            if s.entrypoint
        ],
    )
    section("test", [(f"`{s.ref}`", Claim("test", name, s.ref)) for s in symbols if s.test])
    links = [
        link for link in snap.links if snap.package_of.get(link.target.rsplit(":", 1)[0]) == package
    ]
    section(
        "requirement",
        [
            (
                f"`{link.req_id}` {link.type} `{link.target}` ({link.status})",
                Claim("requirement", name, link.req_id, f"{link.type} {link.target}"),
            )
            for link in links
        ],
    )
    section("owners", [(owner, None) for owner in snap.owners.get(package, [])])
    section("file", [(f"`{p}`", Claim("file", name, p)) for p in files])
    mine = [c for c in snap.changes if snap.package_of.get(c.target.rsplit(":", 1)[0]) == package]
    section(
        "changed",
        [
            (
                f"{c.at.date().isoformat()} `{c.target}` at {(c.commit or '?')[:12]}",
                Claim("changed", name, c.target, (c.commit or "?")[:12]),
            )
            for c in mine[:CHANGES]
        ],
    )
    sources = sources_of(snap, package)
    digest = fingerprint(sources)
    front = {
        "package": name,
        "path": package,
        "repository": snap.repo,
        "ref": snap.ref,
        "commit": snap.commit,
        "generated_at": to_wire(at),
        "fingerprint": digest,
        **snap.boundaries.frontmatter(),
        "claims": len(claims),
    }
    markdown = "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n" + "\n".join(body) + "\n"
    return Card(
        snap.repo,
        snap.ref,
        package,
        name,
        snap.commit,
        snap.valid_at,
        at,
        markdown,
        tuple(claims),
        sources,
        digest,
    )


def index_markdown(repo: str, commit: str, cards: list[Card]) -> str:
    """The repository's ``index.md``: every package card, linked."""
    lines = [f"# {repo} packages", "", f"As of commit `{commit}`.", ""]
    for card in cards:
        lines.append(
            f"- [{card.name}]({card_filename(card)}) `{card.package}`: "
            f"{len(card.claims)} claims, fingerprint {card.fingerprint}"
        )
    return "\n".join(lines) + "\n"


def card_filename(card: Card) -> str:
    """A file name for the card (package names may contain '/' or '@')."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in card.name)
    return f"{safe or 'root'}.md"


def _public(symbol: SymbolRow) -> bool:
    top = "." not in symbol.qualname and ":" not in symbol.qualname
    return top and not symbol.name.startswith("_") and symbol.kind != "module"


def _deps(
    snap: Snapshot,
    package: str,
    name: str,
    kind: str,
    mine: Callable[[tuple[str, str]], bool],
) -> list[tuple[str, Claim | None]]:
    other_of = 1 if kind == "depends_on" else 0
    others = sorted({k[other_of] for k in (*snap.imports, *snap.calls) if mine(k)})
    items: list[tuple[str, Claim | None]] = []
    for other in others:
        key = (package, other) if kind == "depends_on" else (other, package)
        detail = dep_detail(snap.imports.get(key, 0), snap.calls.get(key, 0))
        other_name = snap.packages[other].name if other in snap.packages else other
        claim = Claim(
            "depends_on" if kind == "depends_on" else "called_by", name, other_name, detail
        )
        items.append((f"`{other_name}`: {detail}", claim))
    return items

"""The exact faithfulness gate: every structural claim of a card, checked against the graph.

The claims are parsed back out of the markdown (each rendered section has one
line shape; anything else is free prose, whose backticked identifiers and
"depends on X" / "calls X" phrases are claims too) and each is checked
against the graph snapshot as of the card's commit. A card passes only when
every claim is supported; the result lists each unsupported one with why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from strata.cards.compile import SECTIONS, dep_detail, first_line
from strata.cards.graph import Snapshot, SymbolRow
from strata.cards.model import Card, Claim
from strata.errors import ValidationError

_TITLES = {title: key for key, title in SECTIONS.items()}
_LINE: dict[str, re.Pattern[str]] = {
    "purpose": re.compile(r"^- `([^`]+)`: (.*)$"),
    "api": re.compile(r"^- `([^`]+)` \((\w+)\)$"),
    "depends_on": re.compile(r"^- `([^`]+)`: (imports \d+, calls \d+)$"),
    "called_by": re.compile(r"^- `([^`]+)`: (imports \d+, calls \d+)$"),
    "entrypoint": re.compile(r"^- `([^`]+)`: (.+)$"),
    "test": re.compile(r"^- `([^`]+)`$"),
    "file": re.compile(r"^- `([^`]+)`$"),
    "requirement": re.compile(r"^- `([^`]+)` (\w+) `([^`]+)` \((\w+)\)$"),
    "changed": re.compile(r"^- \S+ `([^`]+)` at (\S+)$"),
}
_KIND = {"purpose": "doc"}
_FILLER = re.compile(r"^(\(none\)|\(and \d+ more\)|#{1,6} .*)?$")
_TICKED = re.compile(r"`([^`\n]+)`")
# "depends on `x`" (optionally "on the `x` package") or a bare name; a bare ordinary word
# ("depends on the settings", "on how it is called") starts a noun phrase, not a name.
_DEPENDS = re.compile(
    r"\bdepends on (?:(?:the )?`([^`\n]+)`|([\w./@:-]+?)(?=[\s,.;:)!?]|$))", re.IGNORECASE
)
_MORE = re.compile(r"(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)(?:the )?`([^`\n]+)`")
_NOT_NAMES = frozenset(
    {
        "a",
        "all",
        "an",
        "another",
        "any",
        "anything",
        "being",
        "both",
        "each",
        "either",
        "every",
        "everything",
        "external",
        "few",
        "having",
        "her",
        "his",
        "how",
        "if",
        "internal",
        "it",
        "its",
        "itself",
        "many",
        "me",
        "more",
        "most",
        "much",
        "my",
        "neither",
        "no",
        "none",
        "nothing",
        "one",
        "other",
        "our",
        "several",
        "some",
        "something",
        "such",
        "that",
        "the",
        "their",
        "them",
        "themselves",
        "these",
        "this",
        "those",
        "two",
        "us",
        "various",
        "what",
        "whatever",
        "when",
        "where",
        "whether",
        "which",
        "whichever",
        "who",
        "whom",
        "whose",
        "why",
        "you",
        "your",
    }
)
_CALLS = re.compile(r"\bcalls `([^`]+)`|\bcalls ([\w.]*[_.][\w.]*(?:\(\))?)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedCard:
    """A card's frontmatter and the claims its markdown makes."""

    front: dict[str, Any]
    claims: tuple[Claim, ...]


@dataclass(frozen=True, slots=True)
class GateResult:
    """The gate's verdict: every claim checked, the unsupported ones with a reason."""

    package: str
    checked: int
    unsupported: tuple[tuple[Claim, str], ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.unsupported


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML frontmatter and the body of a card's markdown."""
    if not text.startswith("---\n"):
        raise ValidationError("a card starts with YAML frontmatter ('---')")
    head, sep, body = text[4:].partition("\n---\n")
    if not sep:
        raise ValidationError("the card's frontmatter is not closed ('---')")
    front = yaml.safe_load(head)
    if not isinstance(front, dict) or not front.get("package") or not front.get("commit"):
        raise ValidationError("the card's frontmatter needs at least package and commit")
    return front, body


def parse_card(text: str) -> ParsedCard:
    """Every claim a card's markdown makes, rendered sections and free prose alike."""
    front, body = split_frontmatter(text)
    subject = str(front["package"])
    claims: list[Claim] = []
    section: str | None = None
    for raw in body.splitlines():
        line = raw.rstrip()
        if line.startswith("## "):
            section = _TITLES.get(line[3:].strip())
            continue
        if _FILLER.match(line.strip()):
            continue
        pattern = _LINE.get(section or "")
        match = pattern.match(line) if pattern is not None else None
        if match is not None and section is not None:
            claims.append(_section_claim(section, subject, match))
        elif section == "owners" and line.startswith("- "):
            continue  # owners come from CODEOWNERS, not the graph: not a structural claim
        else:
            claims.extend(prose_claims(subject, line))
    return ParsedCard(front, tuple(claims))


def prose_claims(subject: str, line: str) -> list[Claim]:
    """Claims in free text: backticked identifiers, "depends on X" and "calls X".

    "depends on" claims a dependency on a backticked name, or on a bare word that is
    not an ordinary function word (so "depends on numpy" is a claim, "depends on the
    caller's settings" is not)."""
    found: list[Claim] = []
    spans: list[tuple[int, int]] = []
    for match in _DEPENDS.finditer(line):
        ticked, bare = match.group(1), match.group(2)
        if ticked is None and bare.lower() in _NOT_NAMES:
            continue  # prose, not a dependency: a backticked name later is still a mention
        found.append(Claim("depends_on", subject, ticked or bare))
        end = match.end()
        while ticked is not None and (more := _MORE.match(line, end)) is not None:
            found.append(Claim("depends_on", subject, more.group(1)))  # "on `a`, `b` and `c`"
            end = more.end()
        spans.append((match.start(), end))
    for match in _CALLS.finditer(line):
        found.append(Claim("calls", subject, match.group(1) or match.group(2)))
        spans.append(match.span())
    for match in _TICKED.finditer(line):
        if not any(a <= match.start() < b for a, b in spans):
            found.append(Claim("mentions", subject, match.group(1)))
    return found


def _section_claim(section: str, subject: str, match: re.Match[str]) -> Claim:
    groups = match.groups()
    kind: Any = _KIND.get(section, section)
    if section == "requirement":
        return Claim(kind, subject, groups[0], f"{groups[1]} {groups[2]}")
    return Claim(kind, subject, groups[0], groups[1] if len(groups) > 1 else "")


def check_card(card: str | Card | Sequence[Claim], snap: Snapshot) -> GateResult:
    """Check every structural claim of a card against the graph snapshot (as of its commit).

    ``card``: the markdown, a :class:`Card` (its markdown is parsed and must
    make exactly the claims recorded next to it) or the claims themselves.
    """
    extra: list[tuple[Claim, str]] = []
    if isinstance(card, Card):
        parsed = parse_card(card.markdown)
        claims = parsed.claims
        recorded = set(card.claims)
        for claim in sorted(set(claims) ^ recorded):
            where = "recorded but not in the text" if claim in recorded else "not recorded"
            extra.append((claim, f"claim {where}"))
    elif isinstance(card, str):
        parsed = parse_card(card)
        claims = parsed.claims
        stated = parsed.front.get("claims")
        if isinstance(stated, int) and stated != len(claims):
            extra.append(
                (
                    Claim("mentions", str(parsed.front["package"]), "claims"),
                    f"frontmatter counts {stated} claims, the text makes {len(claims)}",
                )
            )
    else:
        claims = tuple(card)
    subject = claims[0].subject if claims else ""
    package = snap.package_by_name(subject) if subject else None
    checker = _Checker(snap, package)
    unsupported = [(c, why) for c in claims if (why := checker.problem(c)) is not None]
    return GateResult(subject, len(claims), tuple(extra + unsupported))


class _Checker:
    def __init__(self, snap: Snapshot, package: str | None) -> None:
        self.snap = snap
        self.package = package
        if package is not None and not snap.has_detail(package):
            raise ValueError(f"the snapshot holds no detail of {package!r}: load it first")
        mine = snap.symbols_of(package) if package is not None else []
        self.symbols: dict[str, SymbolRow] = {s.ref: s for s in mine}
        if snap.names is None:
            snap.names = _known_names(snap)
        self.names = snap.names

    def problem(self, claim: Claim) -> str | None:
        """Why the graph does not support the claim (None: it does)."""
        snap, package = self.snap, self.package
        if package is None:
            return f"no package {claim.subject!r} in {snap.repo}/{snap.ref} at {snap.commit[:12]}"
        if snap.package_by_name(claim.subject) != package:
            return f"claim about {claim.subject!r} on the card of {package!r}"
        kind = claim.kind
        if kind == "file":
            return None if claim.object in snap.files.get(package, {}) else "no such file in it"
        if kind in ("api", "doc", "entrypoint", "test"):
            return self._symbol(claim)
        if kind in ("depends_on", "called_by"):
            return self._dependency(claim, package)
        if kind == "requirement":
            return self._requirement(claim, package)
        if kind == "changed":
            hit = any(
                c.target == claim.object and (c.commit or "?")[:12] == claim.detail
                for c in snap.changes
            )
            return None if hit else "no such change in the symbol history"
        if kind == "calls":
            callees = snap.callees.get(package, set())
            by_package = {snap.packages[d].name for (s, d) in snap.calls if s == package}
            name = claim.object.removesuffix("()")
            return None if name in callees or name in by_package else "the package never calls it"
        if kind == "mentions":
            return None if claim.object in self.names else "names nothing in the graph"
        return f"unknown claim kind {kind!r}"

    def _symbol(self, claim: Claim) -> str | None:
        symbol = self.symbols.get(claim.object)
        if symbol is None:
            return "no such symbol in the package"
        if claim.kind == "api":
            return None if symbol.kind == claim.detail else f"it is a {symbol.kind}"
        if claim.kind == "doc":
            doc = first_line(symbol.docstring)
            return None if doc and doc == claim.detail else "its docstring says otherwise"
        if claim.kind == "entrypoint":
            if not symbol.entrypoint:
                return "not an entrypoint"
            ok = claim.detail in ("", symbol.entrypoint)
            return None if ok else f"its entrypoint is {symbol.entrypoint!r}"
        return None if symbol.test else "not a test"

    def _dependency(self, claim: Claim, package: str) -> str | None:
        other = self.snap.package_by_name(claim.object)
        if other is None:
            return "no such package"
        key = (package, other) if claim.kind == "depends_on" else (other, package)
        imports, calls = self.snap.imports.get(key, 0), self.snap.calls.get(key, 0)
        if imports + calls == 0:
            return "no import or call between them"
        actual = dep_detail(imports, calls)
        return None if claim.detail in ("", actual) else f"the graph says {actual}"

    def _requirement(self, claim: Claim, package: str) -> str | None:
        for link in self.snap.links:
            if link.req_id != claim.object:
                continue
            in_package = self.snap.package_of.get(link.target.rsplit(":", 1)[0]) == package
            if in_package and claim.detail in ("", f"{link.type} {link.target}"):
                return None
        return "no such trace link into the package"


def _known_names(snap: Snapshot) -> set[str]:
    names: set[str] = set()
    for path, row in snap.packages.items():
        names.update((path, row.name))
    for path in snap.package_of:
        names.add(path)
    for rows in snap.symbols.values():
        for s in rows:
            names.update((s.ref, s.name, s.qualname, s.qualified_name, f"{s.name}()"))
    names.update(link.req_id for link in snap.links)
    for called in snap.callees.values():
        names.update(called)  # what a package calls in another one it may name
    return names

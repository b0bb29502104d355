"""Requirements as written in the repository: ``REQ-###: text`` atoms, EARS-classified.

A parser, not a model, reads them: every atom is a line ``REQ-123: <text>``,
optionally a checklist item (``- [ ] REQ-123: ...`` / ``- [x] ...``), in
markdown or YAML files (YAML: a mapping of id to text, or a list of
``{id, text}``). Each atom is classified by its EARS pattern and linted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import yaml

from strata.findings import Finding

EarsPattern = Literal[
    "ubiquitous", "event", "state", "unwanted", "optional", "complex", "unclassified"
]

REQ_ID = re.compile(r"^REQ-\d{3,6}$")
_ATOM = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\[(?P<check>[ xX])\]\s+)?(?:\*\*)?(?P<id>REQ-\d{3,6})(?:\*\*)?\s*:\s*"
    r"(?P<text>.+?)\s*$"
)
_SHALL = re.compile(r"\bshall\b", re.I)
_KEYWORDS: dict[str, EarsPattern] = {
    "when": "event",
    "while": "state",
    "if": "unwanted",
    "where": "optional",
}
# A second behaviour joined by "and": "shall log every attempt and lock the account"
# (a verb after "and", then its object), besides a second "shall" or "and also".
_AND_VERB = re.compile(
    r"\bshall\b[^.;]*?\band\s+(?!(?:the|a|an|then)\b)[a-z]+\s+"
    r"(?:the|a|an|all|every|each|its|their|it|them|this|that|these|those|any|no)\b",
    re.I,
)
_CLAUSE_START = re.compile(r"(?:^|[,;]\s*)(when|while|if|where)\b", re.I)
MAX_TEXT = 2000


@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement atom and where it was found."""

    req_id: str
    text: str
    path: str
    line: int
    ears: EarsPattern
    checked: bool | None = None
    lint: tuple[str, ...] = ()


@dataclass(slots=True)
class ParsedRequirements:
    requirements: list[Requirement] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def classify(text: str) -> EarsPattern:
    """The EARS pattern of a requirement's text.

    The clauses before ``shall`` decide: none is ubiquitous; one ``When`` is an
    event, ``While`` a state, ``If ... then`` unwanted behaviour, ``Where`` an
    optional feature; several clause keywords make it complex.
    """
    match = _SHALL.search(text)
    if match is None:
        return "unclassified"
    preamble = text[: match.start()]
    keywords = {k.lower() for k in _CLAUSE_START.findall(preamble)}
    if not keywords:
        return "ubiquitous"
    if len(keywords) > 1:
        return "complex"
    return _KEYWORDS[keywords.pop()]


def lint(text: str) -> list[str]:
    """Lint findings for one atom (a clean atom has none)."""
    found: list[str] = []
    shalls = len(_SHALL.findall(text))
    if shalls == 0:
        found.append("no-shall: a requirement states what the system shall do")
    if (
        shalls > 1
        or re.search(r"\bshall\b[^.;]*\band\s+(?:shall\b|also\b)", text, re.I)
        or _AND_VERB.search(text)
    ):
        found.append("compound: more than one behaviour in one atom; split it")
    if len(text) > MAX_TEXT:
        found.append(f"too-long: more than {MAX_TEXT} characters")
    return found


def _atom(req_id: str, text: str, path: str, line: int, checked: bool | None) -> Requirement:
    return Requirement(
        req_id=req_id,
        text=text[:MAX_TEXT],
        path=path,
        line=line,
        ears=classify(text),
        checked=checked,
        lint=tuple(lint(text)),
    )


def parse_markdown(path: str, text: str) -> ParsedRequirements:
    """Atoms from a markdown file; fenced code blocks are skipped."""
    out = ParsedRequirements()
    fenced = False
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = _ATOM.match(raw)
        if match is None:
            if re.search(r"\bREQ-\d+\s*:", raw) and not re.search(r"REQ-\d{3,6}", raw):
                out.findings.append(
                    Finding(
                        path, number, "bad-id", "requirement ids look like REQ-001 (3 to 6 digits)"
                    )
                )
            continue
        check = match.group("check")
        checked = None if check is None else check.lower() == "x"
        out.requirements.append(
            _atom(match.group("id"), match.group("text"), path, number, checked)
        )
    return out


def parse_yaml(path: str, text: str) -> ParsedRequirements:
    """Atoms from YAML: ``{REQ-001: text}`` or ``[{id: REQ-001, text: ...}]``
    (optionally under a top-level ``requirements:`` key)."""
    out = ParsedRequirements()
    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        out.findings.append(Finding(path, line, "malformed-yaml", f"not valid YAML: {exc}"))
        return out
    if isinstance(data, dict) and "requirements" in data:
        data = data["requirements"]
    lines = _line_index(text)
    items: list[tuple[Any, Any]] = []
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list):
        for entry in data:
            if isinstance(entry, dict) and "id" in entry:
                items.append((entry.get("id"), entry.get("text")))
            else:
                out.findings.append(
                    Finding(path, 1, "malformed-entry", "each entry needs `id` and `text`")
                )
    elif data is not None:
        out.findings.append(
            Finding(path, 1, "malformed-yaml", "expected a mapping or a list of requirements")
        )
    for req_id, body in items:
        line = lines.get(str(req_id), 1)
        if not isinstance(req_id, str) or not REQ_ID.match(req_id):
            out.findings.append(
                Finding(path, line, "bad-id", f"{req_id!r} is not a requirement id like REQ-001")
            )
            continue
        if not isinstance(body, str) or not body.strip():
            out.findings.append(Finding(path, line, "empty-text", f"{req_id} has no text"))
            continue
        out.requirements.append(_atom(req_id, body.strip(), path, line, None))
    return out


def _line_index(text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        for match in re.finditer(r"REQ-\d{3,6}", raw):
            found.setdefault(match.group(0), number)
    return found


def parse_file(path: str, text: str) -> ParsedRequirements:
    """Dispatch on the extension (``.md``/``.markdown``, ``.yml``/``.yaml``)."""
    if path.endswith((".yml", ".yaml")):
        return parse_yaml(path, text)
    return parse_markdown(path, text)


def with_duplicate_lint(
    requirements: list[Requirement], duplicates: list[Finding]
) -> list[Requirement]:
    """The kept atoms, each id declared again elsewhere linted ``duplicate-id``."""
    again: dict[str, list[str]] = {}
    for finding in duplicates:
        req_id = finding.message.split(" ", 1)[0]
        again.setdefault(req_id, []).append(f"{finding.path}:{finding.line}")
    return [
        replace(
            req,
            lint=(*req.lint, f"duplicate-id: also declared at {', '.join(again[req.req_id])}"),
        )
        if req.req_id in again
        else req
        for req in requirements
    ]


def check_duplicates(
    requirements: list[Requirement],
) -> tuple[list[Requirement], list[Finding]]:
    """The first atom of every id, and a finding at each later place it is declared again."""
    seen: set[str] = set()
    kept: list[Requirement] = []
    findings: list[Finding] = []
    for req in requirements:
        if req.req_id in seen:
            findings.append(
                Finding(
                    req.path,
                    req.line,
                    "duplicate-id",
                    f"{req.req_id} is declared more than once",
                )
            )
            continue
        seen.add(req.req_id)
        kept.append(req)
    return kept, findings

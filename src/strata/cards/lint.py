"""`strata lint`: what in a repository's knowledge no longer holds, as of now.

Rules (``error`` fails the lint, ``warning`` reports):

- ``contradiction`` (error): two current requirements that say the same thing, one
  of them negated ("shall" / "shall not"), or a fact slot with two current versions
  (:func:`strata.graph.integrity.check_repository`);
- ``stale_claim`` (error): a claim of a current card the graph no longer supports;
- ``vanished_link`` (error): a current trace link into a symbol that is gone (the
  link went STALE, or the symbol has no current state);
- ``unlinked_requirement`` (warning): a current requirement with no current link;
- ``stale_card`` (warning): a card whose sources changed since it was compiled;
- ``needs_review`` (warning): a card whose model prose waits for a reviewer.

One read per rule, bounded to the repository; the report carries its metrics
(counts per rule, what was checked, seconds) and renders as markdown or JSON.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from strata.cards.gate import check_card
from strata.cards.service import CardService
from strata.errors import NotFound
from strata.graph.gateway import Gateway
from strata.graph.integrity import check_repository
from strata.ontology.model import Ontology
from strata.temporal import AsOf, as_of_predicate

_ST = as_of_predicate("st")
_E = as_of_predicate("e")
_SS = as_of_predicate("ss")

REQUIREMENTS = f"""
MATCH (r:Requirement {{repo: $repo}})-[st:STATE]->(r)
WHERE {_ST}
RETURN r.req_id AS req_id, st.text AS text, st.path AS path, st.line AS line,
       EXISTS {{
         MATCH (r)-[e:IMPLEMENTED_BY|AFFECTS|VERIFIED_BY]->(:Symbol {{ref: $ref}})
         WHERE {_E}
       }} AS linked
ORDER BY r.req_id
"""

VANISHED = f"""
MATCH (r:Requirement {{repo: $repo}})-[e:IMPLEMENTED_BY|AFFECTS|VERIFIED_BY]->(s:Symbol)
WHERE s.ref = $ref AND {_E} AND (e.status = 'STALE'
      OR NOT EXISTS {{ MATCH (s)-[ss:STATE]->(s) WHERE {_SS} }})
RETURN r.req_id AS req_id, type(e) AS type, s.path AS path, s.qualname AS qualname,
       e.status AS status, e.gone_commit AS gone
ORDER BY r.req_id, s.path, s.qualname
LIMIT $limit
"""

Severity = Literal["error", "warning"]
RULES: dict[str, Severity] = {
    "contradiction": "error",
    "stale_claim": "error",
    "vanished_link": "error",
    "unlinked_requirement": "warning",
    "stale_card": "warning",
    "needs_review": "warning",
}
_WORD = re.compile(r"[a-z0-9_]+")
_MODALS = {"shall", "must", "will", "should", "may"}


@dataclass(frozen=True, slots=True, order=True)
class LintFinding:
    """One thing that no longer holds, about ``subject`` (a REQ id, package or link)."""

    rule: str
    subject: str
    message: str

    @property
    def severity(self) -> Severity:
        return RULES[self.rule]


@dataclass(slots=True)
class LintReport:
    """Every finding of one lint, with what was checked and how long it took."""

    repo: str
    ref: str
    commit: str | None
    findings: list[LintFinding] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def counts(self) -> dict[str, int]:
        """Findings per rule, every rule listed (0 included): the lint's metrics."""
        found = dict.fromkeys(RULES, 0)
        for finding in self.findings:
            found[finding.rule] += 1
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.repo,
            "ref": self.ref,
            "commit": self.commit,
            "ok": self.ok,
            "metrics": {
                "errors": sum(1 for f in self.findings if f.severity == "error"),
                "warnings": sum(1 for f in self.findings if f.severity == "warning"),
                "by_rule": self.counts(),
                "checked": self.checked,
                "seconds": round(self.seconds, 3),
            },
            "findings": [
                {"rule": f.rule, "severity": f.severity, "subject": f.subject, "message": f.message}
                for f in self.findings
            ],
        }

    def markdown(self) -> str:
        at = f" at `{self.commit[:12]}`" if self.commit else ""
        verdict = "ok" if self.ok else "errors found"
        lines = [f"# Lint of {self.repo}/{self.ref}{at}: {verdict}", ""]
        checked = ", ".join(f"{n} {what}" for what, n in sorted(self.checked.items()))
        lines += [f"Checked {checked} in {self.seconds:.2f} s.", "", "| rule | severity | found |"]
        lines.append("|---|---|---|")
        lines += [f"| {rule} | {RULES[rule]} | {n} |" for rule, n in self.counts().items()]
        for severity in ("error", "warning"):
            mine = [f for f in self.findings if f.severity == severity]
            if mine:
                lines += ["", f"## {severity.capitalize()}s", ""]
                lines += [f"- **{f.rule}** `{f.subject}`: {f.message}" for f in mine]
        return "\n".join(lines) + "\n"


def negation_key(text: str) -> tuple[str, bool] | None:
    """A requirement's words without its negation, and whether it was negated
    ("The API shall not log secrets" -> ("the api shall log secrets", True))."""
    words = _WORD.findall(text.lower())
    for i, word in enumerate(words[:-1]):
        if word in _MODALS:
            negated = words[i + 1] in ("not", "never")
            rest = words[i + 2 :] if negated else words[i + 1 :]
            return " ".join([*words[:i], word, *rest]), negated
    return None


def lint_repository(
    gateway: Gateway,
    ontology: Ontology,
    repo: str,
    ref: str = "main",
    *,
    limit: int = 500,
    timeout: float | None = None,
) -> LintReport:
    """Lint ``repo``/``ref`` as of now (see the module docstring for the rules); ``timeout``
    bounds each read (the API passes its request budget)."""
    started = time.perf_counter()
    params: dict[str, Any] = {"repo": repo, "ref": ref, **AsOf.at().params()}
    service = CardService(gateway, ontology)
    cards = service.cards(repo, ref, timeout=timeout)
    requirements = gateway.read(REQUIREMENTS, timeout=timeout, **params)
    if not cards and not requirements:
        raise NotFound(
            f"{repo}/{ref} has neither cards nor requirements to lint",
            hint="index it and run strata cards build",
        )
    report = LintReport(repo, ref, None)
    found = report.findings
    _contradictions(requirements, found)
    integrity = check_repository(gateway, ontology, repo, limit=20)
    for slot in integrity.violations:
        found.append(LintFinding("contradiction", slot.src, f"{slot.rel}: {slot.describe()}"))
    for row in requirements:
        if not row["linked"]:
            where = f"{row['path']}:{row['line']}"
            found.append(
                LintFinding("unlinked_requirement", row["req_id"], f"no trace link ({where})")
            )
    links = gateway.read(VANISHED, limit=limit, timeout=timeout, **params)
    for row in links:
        gone = f"gone at {row['gone'][:12]}" if row["gone"] else "its symbol has no current state"
        target = f"{row['path']}:{row['qualname']}"
        found.append(LintFinding("vanished_link", row["req_id"], f"{row['type']} {target}: {gone}"))
    if cards:
        snaps = service.snapshots(repo, ref, timeout=timeout)
        report.commit = snaps.at(None).commit
        for card in cards:
            head = snaps.of_card(card, head=True)  # its package's detail, by its path map
            gate = check_card(list(card.claims), head)
            for claim, why in gate.unsupported:
                message = f"{claim.kind} {claim.object!r}: {why} (as of {head.commit[:12]})"
                found.append(LintFinding("stale_claim", card.name, message))
            staleness = service.staleness(card, head)
            if staleness.stale:
                changed = [*staleness.changed, *staleness.added, *staleness.removed]
                more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
                message = f"compiled at {card.commit[:12]}; changed since: {', '.join(changed[:5])}"
                found.append(LintFinding("stale_card", card.name, message + more))
            if card.status == "needs_review":
                reasons = card.review.reasons if card.review is not None else ()
                found.append(LintFinding("needs_review", card.name, "; ".join(reasons)))
    report.findings.sort(key=lambda f: (RULES[f.rule] != "error", f.rule, f.subject, f.message))
    report.checked = {
        "cards": len(cards),
        "requirements": len(requirements),
        "fact slots": sum(integrity.slots.values()),
    }
    report.seconds = time.perf_counter() - started
    return report


def _contradictions(requirements: list[dict[str, Any]], found: list[LintFinding]) -> None:
    by_key: dict[str, dict[bool, list[str]]] = {}
    for row in requirements:
        key = negation_key(row["text"] or "")
        if key is not None:
            by_key.setdefault(key[0], {}).setdefault(key[1], []).append(row["req_id"])
    for sides in by_key.values():
        for positive in sides.get(False, []):
            for negative in sides.get(True, []):
                found.append(
                    LintFinding("contradiction", positive, f"{negative} says the opposite")
                )

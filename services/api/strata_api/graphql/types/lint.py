"""`strata lint` through GraphQL: the findings of one lint and its metrics."""

from __future__ import annotations

import json

import strawberry

from strata.cards.lint import LintReport as LintView


@strawberry.type(description="One thing in the repository's knowledge that no longer holds.")
class LintFinding:
    rule: str = strawberry.field(
        description="contradiction, stale_claim, vanished_link, unlinked_requirement, "
        "stale_card or needs_review."
    )
    severity: str = strawberry.field(description="error (fails the lint) or warning.")
    subject: str = strawberry.field(description="A REQ id or a card's package.")
    message: str


@strawberry.type(description="How many findings one rule made.")
class LintCount:
    rule: str
    count: int


@strawberry.type(description="A lint of a repository's knowledge as of now.")
class LintReport:
    repository: str
    ref: str
    commit: str | None = strawberry.field(description="The ref's head the cards were checked at.")
    ok: bool = strawberry.field(description="No finding of severity error.")
    seconds: float
    counts: list[LintCount] = strawberry.field(description="Findings per rule (the metrics).")
    checked: list[LintCount] = strawberry.field(description="What was checked, by kind.")
    findings: list[LintFinding]
    markdown: str = strawberry.field(description="The report as `strata lint` prints it.")
    json: str = strawberry.field(description="The report as `strata lint --format json`.")

    @classmethod
    def from_domain(cls, report: LintView) -> LintReport:
        return cls(
            repository=report.repo,
            ref=report.ref,
            commit=report.commit,
            ok=report.ok,
            seconds=report.seconds,
            counts=[LintCount(rule=r, count=n) for r, n in report.counts().items()],
            checked=[LintCount(rule=r, count=n) for r, n in sorted(report.checked.items())],
            findings=[
                LintFinding(rule=f.rule, severity=f.severity, subject=f.subject, message=f.message)
                for f in report.findings
            ],
            markdown=report.markdown(),
            json=json.dumps(report.to_json()),
        )

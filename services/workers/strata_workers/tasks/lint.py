"""The knowledge queue: `strata lint` per repository, sent by celery beat on a schedule."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from strata.cards.lint import lint_repository
from strata.errors import NotFound
from strata.jobs import KNOWLEDGE_LINT, LintJob, parse_job
from strata.jobstore import new_job_id
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata_workers.context import worker_context
from strata_workers.runner import RETRY, job_run

MAX_FINDINGS = 200  # per job record: the full report is one `strata lint` away


@shared_task(name=KNOWLEDGE_LINT, bind=True, **RETRY)
def lint(self: Any, job: dict[str, Any] | None = None) -> dict[str, Any]:
    """Lint one repository (or every registered one); each gets a knowledge.lint job whose
    result is the report's JSON (metrics and the first findings). Read-only."""
    parsed = parse_job(LintJob, job or {})
    ctx = worker_context(self.app.conf.strata_settings)
    if parsed.repo is not None:
        names = [parsed.repo]
    else:
        keys = ServerKeys(ctx.settings.secret_key.get_secret_value())
        names = [r.name for r in RepoRegistry(ctx.gateway, keys).list_all()]
    summary: dict[str, Any] = {}
    for name in names:
        job_id = new_job_id()
        ctx.jobs.create("knowledge.lint", name, job_id=job_id, params={"ref": parsed.ref})
        try:
            with job_run(self, job_id):
                report = lint_repository(ctx.gateway, ctx.ontology, name, parsed.ref)
        except NotFound as exc:  # nothing indexed to lint: the job says so, the others go on
            summary[name] = {"job": job_id, "skipped": exc.message}
            continue
        result = report.to_json()
        result["findings"] = result["findings"][:MAX_FINDINGS]
        ctx.jobs.succeed(job_id, result)
        summary[name] = {"job": job_id, "ok": report.ok, **result["metrics"]}
    return summary

"""The scheduled lint on a real Celery worker and Redis: one knowledge.lint job per repository."""

from __future__ import annotations

import time
from typing import Any

import redis

from strata.cards import CardService
from strata.jobs import KNOWLEDGE_LINT
from strata.jobstore import JobRecord, JobStore
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from strata_workers.app import create_celery
from tests.integration.cards.conftest import Indexed
from tests.integration.cards.test_worker import worker_app

__all__ = ["worker_app"]


def wait_lint(jobs: JobStore, repo: str, timeout: float = 120) -> JobRecord:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for record in jobs.for_repo(repo, limit=20):
            if record.kind == "knowledge.lint" and record.state in ("succeeded", "failed"):
                return record
        time.sleep(0.2)
    raise AssertionError("no lint job finished")


def test_beat_schedules_the_lint(settings: Settings) -> None:
    schedule = create_celery(settings).conf.beat_schedule["strata-knowledge-lint"]
    assert schedule["task"] == KNOWLEDGE_LINT
    assert schedule["schedule"] == settings.cards_lint_interval_s
    assert schedule["options"]["queue"] == settings.queue_knowledge


def test_the_scheduled_run_lints_every_registered_repository(
    worker_app: Any, settings: Settings, indexed: Indexed, service: CardService, gateway: Any
) -> None:
    service.build(indexed.repo)
    RepoRegistry(gateway, ServerKeys(settings.secret_key.get_secret_value())).register(
        name=indexed.repo, provider="github", secret="s" * 32, path=str(indexed.git.path)
    )
    # what beat sends: no arguments, every registered repository
    worker_app.send_task(KNOWLEDGE_LINT, queue=settings.queue_knowledge).get(timeout=300)
    record = wait_lint(JobStore(redis.Redis.from_url(settings.redis_url)), indexed.repo)
    assert record.state == "succeeded", record.error
    assert record.result["ok"] is True
    assert record.result["metrics"]["checked"]["cards"] == 2
    assert record.result["metrics"]["by_rule"]["stale_card"] == 0

"""Found by bench/faults.py (neo4j scenario, loaded machine): the first write after Neo4j
restarted ran past the transaction timeout, and the job failed for good on a
``database_error`` although Neo4j says a new transaction will succeed. Now it is retried
like an unreachable Neo4j; other database errors still end the job at once."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import redis

from strata.devstack.redis import RedisServer
from strata.errors import DatabaseError, DatabaseUnavailable
from strata.jobstore import JobStore
from strata.settings import Settings
from strata_workers import context as worker_context_module
from strata_workers.runner import job_run

TIMED_OUT = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"


def _task(settings: Settings, retries: int) -> Any:
    """What job_run reads of a bound Celery task, for a run of retry ``retries``."""
    request = SimpleNamespace(retries=retries, delivery_info={}, kwargs={})
    return SimpleNamespace(
        app=SimpleNamespace(conf=SimpleNamespace(strata_settings=settings)),
        request=request,
        max_retries=20,
        name="strata.code.reindex",
    )


@pytest.fixture
def jobs(settings: Settings, redis_server: RedisServer) -> JobStore:
    worker_context_module._context = None  # this process's worker context: these settings
    return JobStore(redis.Redis.from_url(settings.redis_url))


@pytest.mark.parametrize(("retries", "state"), [(0, "queued"), (20, "failed")])
def test_a_transaction_timeout_is_retried_until_the_retries_run_out(
    jobs: JobStore, settings: Settings, unique: str, retries: int, state: str
) -> None:
    job = jobs.create("code.reindex", f"tx-{unique}")
    with pytest.raises(DatabaseUnavailable), job_run(_task(settings, retries), job.id):
        raise DatabaseError(
            "Neo4j error: the transaction has been terminated", gql_status=TIMED_OUT
        )
    record = jobs.get(job.id)
    assert record.state == state
    assert record.error is not None
    assert record.error["code"] == "database_unavailable"
    assert [r.id for r in jobs.dead_letters(f"tx-{unique}")] == (
        [job.id] if state == "failed" else []
    )


def test_another_database_error_still_fails_the_job(
    jobs: JobStore, settings: Settings, unique: str
) -> None:
    job = jobs.create("code.reindex", f"tx-{unique}")
    constraint = "Neo.ClientError.Schema.ConstraintValidationFailed"
    with pytest.raises(DatabaseError), job_run(_task(settings, 0), job.id):
        raise DatabaseError("Neo4j constraint violated", gql_status=constraint)
    record = jobs.get(job.id)
    assert record.state == "failed"
    assert record.error is not None
    assert record.error["code"] == "database_error"

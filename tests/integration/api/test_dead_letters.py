"""`jobs(deadLetter: true)`: the jobs of a repository that ended FAILED after their attempts."""

from __future__ import annotations

from strata.jobstore import JobStore
from tests.integration.api.conftest import Api

DEAD = (
    "query J($r: String!, $d: Boolean!) "
    "{ jobs(repository: $r, deadLetter: $d) { id state attempts error } }"
)


def test_dead_letters_list_only_jobs_that_failed_for_good(api: Api, unique: str) -> None:
    repo = f"dead-{unique}"
    jobs = JobStore(api.redis)
    failed, succeeded = jobs.create("code.reindex", repo), jobs.create("code.reindex", repo)
    for job in (failed, succeeded):
        jobs.start(job.id, heartbeat_s=5)
    jobs.fail(failed.id, {"code": "validation_error", "message": "bad"})
    jobs.succeed(succeeded.id, {})
    key = api.key("read", repo)

    dead = api.gql(DEAD, key, {"r": repo, "d": True}).json()["data"]["jobs"]
    assert dead == [
        {
            "id": failed.id,
            "state": "FAILED",
            "attempts": 1,
            "error": {"code": "validation_error", "message": "bad"},
        }
    ]
    every = api.gql(DEAD, key, {"r": repo, "d": False}).json()["data"]["jobs"]
    assert {job["id"] for job in every} == {failed.id, succeeded.id}
    other = api.gql(DEAD, api.key("read", f"other-{unique}"), {"r": repo, "d": True}).json()
    assert other == {"data": {"jobs": []}}  # another repository's key sees none

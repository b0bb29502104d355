"""Push webhooks on the real app: verified before parsed, de-duplicated, enqueued by name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from strata.jobstore import JobStore
from tests.integration.api.conftest import SHA_A, SHA_B, WEBHOOK_SECRET, Api, sign

ZERO = "0" * 40


def push_body(
    ref: str = "refs/heads/main", before: str = SHA_A, after: str = SHA_B, **extra: Any
) -> bytes:
    return json.dumps({"ref": ref, "before": before, "after": after, **extra}).encode()


def github(
    body: bytes, *, event: str = "push", delivery: str = "", secret: str = WEBHOOK_SECRET
) -> dict[str, str]:
    headers = {"X-GitHub-Event": event, "X-Hub-Signature-256": "sha256=" + sign(body, secret)}
    if delivery:
        headers["X-GitHub-Delivery"] = delivery
    return headers


@pytest.fixture
def repo(api: Api, unique: str) -> str:
    name = f"gh-{unique}"
    api.register(name, "github")
    return name


class TestGithubSignatures:
    """Anything but a correct HMAC of the raw body is 401 and enqueues nothing."""

    def test_correct_signature_is_accepted(self, api: Api, repo: str) -> None:
        body = push_body()
        response = api.push("github", repo, body, github(body, delivery="ok-1"))
        assert response.status_code == 202, response.text
        assert len(response.json()["jobs"]) == 1
        assert api.queued() == 1

    def test_bad_signature(self, api: Api, repo: str) -> None:
        body = push_body()
        response = api.push("github", repo, body, github(body, secret="another-secret-0123456789"))
        assert response.status_code == 401
        assert api.queued() == 0

    def test_missing_signature(self, api: Api, repo: str) -> None:
        body = push_body()
        response = api.push("github", repo, body, {"X-GitHub-Event": "push"})
        assert response.status_code == 401
        assert api.queued() == 0

    def test_truncated_signature(self, api: Api, repo: str) -> None:
        body = push_body()
        headers = github(body)
        headers["X-Hub-Signature-256"] = headers["X-Hub-Signature-256"][:-8]
        assert api.push("github", repo, body, headers).status_code == 401
        assert api.queued() == 0

    def test_signature_without_prefix(self, api: Api, repo: str) -> None:
        body = push_body()
        response = api.push(
            "github", repo, body, {"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body)}
        )
        assert response.status_code == 401
        assert api.queued() == 0

    def test_sha1_header_alone_is_not_enough(self, api: Api, repo: str) -> None:
        body = push_body()
        response = api.push(
            "github",
            repo,
            body,
            {"X-GitHub-Event": "push", "X-Hub-Signature": "sha256=" + sign(body)},
        )
        assert response.status_code == 401
        assert api.queued() == 0

    def test_signature_over_reserialized_json_is_refused(self, api: Api, repo: str) -> None:
        raw = b'{"ref": "refs/heads/main",  "before": "%s", "after": "%s"}' % (
            SHA_A.encode(),
            SHA_B.encode(),
        )
        reserialized = json.dumps(json.loads(raw), separators=(",", ":")).encode()
        assert reserialized != raw
        response = api.push("github", repo, raw, github(reserialized))
        assert response.status_code == 401
        assert api.queued() == 0

    def test_gitea_delivery_on_the_github_route_is_refused(self, api: Api, repo: str) -> None:
        body = push_body()
        headers = github(body) | {"X-Gitea-Event": "push", "X-Gitea-Signature": sign(body)}
        response = api.push("github", repo, body, headers)
        assert response.status_code == 401
        assert "gitea" in response.json()["error"]
        assert api.queued() == 0

    def test_forgejo_delivery_on_the_github_route_is_refused(self, api: Api, repo: str) -> None:
        body = push_body()
        response = api.push("github", repo, body, github(body) | {"X-Forgejo-Event": "push"})
        assert response.status_code == 401
        assert api.queued() == 0

    def test_repository_registered_for_another_provider(self, api: Api, unique: str) -> None:
        name = f"gl-{unique}"
        api.register(name, "gitlab")
        body = push_body()
        assert api.push("github", name, body, github(body)).status_code == 401
        assert api.queued() == 0


class TestGiteaAndForgejo:
    """The Gitea route reads only Gitea/Forgejo signatures, never GitHub's."""

    @pytest.fixture
    def gitea_repo(self, api: Api, unique: str) -> str:
        name = f"gt-{unique}"
        api.register(name, "gitea")
        return name

    def test_gitea_signature(self, api: Api, gitea_repo: str) -> None:
        body = push_body()
        headers = {
            "X-Gitea-Event": "push",
            "X-Gitea-Signature": sign(body),
            "X-Gitea-Delivery": "g1",
        }
        assert api.push("gitea", gitea_repo, body, headers).status_code == 202
        assert api.queued() == 1

    def test_forgejo_signature(self, api: Api, gitea_repo: str) -> None:
        body = push_body()
        headers = {"X-Forgejo-Event": "push", "X-Forgejo-Signature": sign(body)}
        assert api.push("gitea", gitea_repo, body, headers).status_code == 202
        assert api.queued() == 1

    def test_github_headers_are_no_substitute(self, api: Api, gitea_repo: str) -> None:
        body = push_body()
        headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign(body)}
        assert api.push("gitea", gitea_repo, body, headers).status_code == 401
        assert api.queued() == 0

    def test_one_bad_signature_of_two_is_refused(self, api: Api, gitea_repo: str) -> None:
        body = push_body()
        headers = {
            "X-Gitea-Event": "push",
            "X-Forgejo-Signature": sign(body),
            "X-Gitea-Signature": "0" * 64,
        }
        assert api.push("gitea", gitea_repo, body, headers).status_code == 401
        assert api.queued() == 0

    def test_prefixed_signature_is_refused(self, api: Api, gitea_repo: str) -> None:
        body = push_body()
        headers = {"X-Gitea-Event": "push", "X-Gitea-Signature": "sha256=" + sign(body)}
        assert api.push("gitea", gitea_repo, body, headers).status_code == 401


class TestGitlab:
    """GitLab's token is compared in constant time with its stored hash."""

    @pytest.fixture
    def gitlab_repo(self, api: Api, unique: str) -> str:
        name = f"gl-{unique}"
        api.register(name, "gitlab")
        return name

    def test_correct_token(self, api: Api, gitlab_repo: str) -> None:
        body = push_body()
        headers = {"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": WEBHOOK_SECRET}
        assert api.push("gitlab", gitlab_repo, body, headers).status_code == 202
        assert api.queued() == 1

    def test_wrong_token(self, api: Api, gitlab_repo: str) -> None:
        body = push_body()
        headers = {"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": WEBHOOK_SECRET + "x"}
        assert api.push("gitlab", gitlab_repo, body, headers).status_code == 401
        assert api.queued() == 0

    def test_missing_token(self, api: Api, gitlab_repo: str) -> None:
        body = push_body()
        assert (
            api.push("gitlab", gitlab_repo, body, {"X-Gitlab-Event": "Push Hook"}).status_code
            == 401
        )
        assert api.queued() == 0

    def test_hmac_is_no_substitute_for_the_token(self, api: Api, gitlab_repo: str) -> None:
        body = push_body()
        headers = {"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": sign(body)}
        assert api.push("gitlab", gitlab_repo, body, headers).status_code == 401

    def test_idempotency_key_deduplicates(self, api: Api, gitlab_repo: str) -> None:
        body = push_body()
        headers = {
            "X-Gitlab-Event": "Push Hook",
            "X-Gitlab-Token": WEBHOOK_SECRET,
            "Idempotency-Key": "gl-delivery-1",
        }
        assert api.push("gitlab", gitlab_repo, body, headers).status_code == 202
        assert api.push("gitlab", gitlab_repo, body, headers).status_code == 200
        assert api.queued() == 1


class TestBitbucket:
    """Bitbucket signs with X-Hub-Signature; one push may carry several changes."""

    def test_each_tracked_change_is_a_job(self, make_api: Any, unique: str) -> None:
        with make_api(webhook_all_branches=True) as api:
            name = f"bb-{unique}"
            api.register(name, "bitbucket")
            change = {
                "old": {"type": "branch", "name": "main", "target": {"hash": SHA_A}},
                "new": {"type": "branch", "name": "main", "target": {"hash": SHA_B}},
            }
            other = {
                "old": None,
                "new": {"type": "branch", "name": "dev", "target": {"hash": SHA_B}},
            }
            body = json.dumps({"push": {"changes": [change, other]}}).encode()
            headers = {"X-Event-Key": "repo:push", "X-Hub-Signature": "sha256=" + sign(body)}
            response = api.push("bitbucket", name, body, headers)
            assert response.status_code == 202, response.text
            assert len(response.json()["jobs"]) == 2
            assert api.queued() == 2

    def test_github_delivery_on_the_bitbucket_route(self, api: Api, unique: str) -> None:
        name = f"bb-{unique}"
        api.register(name, "bitbucket")
        body = push_body()
        headers = github(body) | {"X-Hub-Signature": "sha256=" + sign(body)}
        assert api.push("bitbucket", name, body, headers).status_code == 401
        assert api.queued() == 0


class TestDeliveries:
    """Verified deliveries: parsed, validated, filtered by ref, de-duplicated."""

    def test_same_delivery_twice_is_one_job(self, api: Api, repo: str) -> None:
        body = push_body()
        first = api.push("github", repo, body, github(body, delivery="dup-1"))
        second = api.push("github", repo, body, github(body, delivery="dup-1"))
        assert first.status_code == 202
        assert second.status_code == 200
        assert "duplicate" in second.json()["status"]
        assert api.queued() == 1
        assert len(JobStore(api.redis).for_repo(repo)) == 1

    def test_same_body_without_delivery_id_is_one_job(self, api: Api, repo: str) -> None:
        body = push_body()
        assert api.push("github", repo, body, github(body)).status_code == 202
        assert api.push("github", repo, body, github(body)).status_code == 200
        assert api.queued() == 1

    def test_job_carries_the_push(self, api: Api, repo: str) -> None:
        body = push_body(forced=True)
        job_id = api.push("github", repo, body, github(body, delivery="f-1")).json()["jobs"][0]
        record = JobStore(api.redis).get(job_id)
        assert record.kind == "code.reindex"
        assert record.state == "queued"
        assert record.params["forced"] is True
        assert record.params["before"] == SHA_A
        assert record.params["after"] == SHA_B
        assert record.params["delivery"] == "f-1"
        task = json.loads(api.redis.lindex(api.settings.queue_code, 0))
        assert task["headers"]["task"] == "strata.code.reindex"
        assert task["headers"]["id"] == job_id

    def test_branch_creation_is_a_full_index(self, api: Api, repo: str) -> None:
        body = push_body(before=ZERO)
        job_id = api.push("github", repo, body, github(body)).json()["jobs"][0]
        assert JobStore(api.redis).get(job_id).params["before"] is None

    def test_branch_deletion_closes_the_branch(self, api: Api, repo: str) -> None:
        """Deleting the tracked branch is a job: the worker closes its facts at that moment."""
        body = push_body(after=ZERO, deleted=True)
        response = api.push("github", repo, body, github(body))
        assert response.status_code == 202, response.text
        record = JobStore(api.redis).get(response.json()["jobs"][0])
        assert record.params["after"] == ZERO
        assert api.queued() == 1

    def test_deleting_an_untracked_branch_enqueues_nothing(self, api: Api, repo: str) -> None:
        body = push_body(ref="refs/heads/feature", after=ZERO, deleted=True)
        response = api.push("github", repo, body, github(body))
        assert response.status_code == 200
        assert response.json()["refs"] == {"refs/heads/feature": "branch not tracked"}
        assert api.queued() == 0

    def test_tag_deletion_enqueues_nothing(self, api: Api, repo: str) -> None:
        body = push_body(ref="refs/tags/v1.0", after=ZERO, deleted=True)
        response = api.push("github", repo, body, github(body))
        assert response.status_code == 200
        assert response.json()["status"] == "deleted, nothing to index"
        assert api.queued() == 0

    def test_tag_push_is_ignored(self, api: Api, repo: str) -> None:
        body = push_body(ref="refs/tags/v1.0")
        response = api.push("github", repo, body, github(body))
        assert response.status_code == 200
        assert response.json()["refs"] == {"refs/tags/v1.0": "tag (not indexed)"}
        assert api.queued() == 0

    def test_tag_push_is_indexed_when_configured(self, make_api: Any, unique: str) -> None:
        with make_api(webhook_index_tags=True) as api:
            name = f"tag-{unique}"
            api.register(name, "github")
            body = push_body(ref="refs/tags/v1.0")
            assert api.push("github", name, body, github(body)).status_code == 202
            assert api.queued() == 1

    def test_untracked_branch_is_ignored(self, api: Api, repo: str) -> None:
        body = push_body(ref="refs/heads/feature")
        response = api.push("github", repo, body, github(body))
        assert response.status_code == 200
        assert response.json()["refs"] == {"refs/heads/feature": "branch not tracked"}
        assert api.queued() == 0

    def test_ping(self, api: Api, repo: str) -> None:
        body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
        response = api.push("github", repo, body, github(body, event="ping"))
        assert response.status_code == 200
        assert response.json() == {"status": "pong"}
        assert api.queued() == 0

    def test_other_events_are_ignored(self, api: Api, repo: str) -> None:
        body = json.dumps({"action": "opened"}).encode()
        response = api.push("github", repo, body, github(body, event="issues"))
        assert response.status_code == 200
        assert response.json()["status"] == "ignored"
        assert api.queued() == 0

    def test_malformed_json(self, api: Api, repo: str) -> None:
        body = b'{"ref": "refs/heads/main", "before": '
        response = api.push("github", repo, body, github(body))
        assert response.status_code == 400
        assert api.queued() == 0

    def test_json_that_is_not_an_object(self, api: Api, repo: str) -> None:
        body = b'["refs/heads/main"]'
        assert api.push("github", repo, body, github(body)).status_code == 400

    def test_deeply_nested_json(self, api: Api, repo: str) -> None:
        body = b"[" * 100_000 + b"]" * 100_000
        assert api.push("github", repo, body, github(body)).status_code == 400

    def test_oversized_body(self, make_api: Any, unique: str) -> None:
        with make_api(webhook_max_body_bytes=2048) as api:
            name = f"big-{unique}"
            api.register(name, "github")
            body = push_body(padding="x" * 4096)
            response = api.push("github", name, body, github(body))
            assert response.status_code == 413
            assert api.queued() == 0

    def test_oversized_body_without_content_length(self, make_api: Any, unique: str) -> None:
        with make_api(webhook_max_body_bytes=2048) as api:
            name = f"big-{unique}"
            api.register(name, "github")
            body = push_body(padding="x" * 4096)

            def chunks() -> Any:
                yield body[:1000]
                yield body[1000:]

            response = api.client.post(
                f"/webhooks/github/{name}", content=chunks(), headers=github(body)
            )
            assert response.status_code == 413
            assert api.queued() == 0

    @pytest.mark.parametrize("sha", ["a" * 39, "A" * 40, "g" * 40, "HEAD", "", "a" * 41])
    def test_bad_after_sha(self, api: Api, repo: str, sha: str) -> None:
        body = push_body(after=sha)
        assert api.push("github", repo, body, github(body)).status_code == 400
        assert api.queued() == 0

    def test_bad_before_sha(self, api: Api, repo: str) -> None:
        body = push_body(before="1234")
        assert api.push("github", repo, body, github(body)).status_code == 400
        assert api.queued() == 0

    @pytest.mark.parametrize(
        "ref", ["refs/heads/a..b", "refs/heads/x.lock", "main", "refs/heads/a b", "-refs/heads/x"]
    )
    def test_ref_refused_by_git(self, api: Api, repo: str, ref: str) -> None:
        body = push_body(ref=ref)
        assert api.push("github", repo, body, github(body)).status_code == 400
        assert api.queued() == 0

    def test_unknown_provider_route(self, api: Api, repo: str) -> None:
        body = push_body()
        assert api.push("svn", repo, body, github(body)).status_code == 404


class TestUnregisteredRepositories:
    """An unregistered repository reads exactly like a bad signature and enqueues nothing."""

    def test_push_to_unregistered_repository(self, api: Api, repo: str, unique: str) -> None:
        body = push_body()
        unknown = api.push("github", f"nope-{unique}", body, github(body))
        bad = api.push("github", repo, body, github(body, secret="wrong-secret-0123456789"))
        assert unknown.status_code == bad.status_code == 401
        assert unknown.json() == bad.json()
        assert api.queued() == 0

    def test_invalid_repository_name(self, api: Api) -> None:
        body = push_body()
        assert api.push("github", "..%2F..", body, github(body)).status_code in (401, 404)
        assert api.queued() == 0


class TestBrokerDown:
    """A broker that refuses the task is a 503 the git host may retry; nothing leaks."""

    def test_refused_send_is_503_and_the_job_is_marked_failed(
        self, make_api: Any, unique: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        with make_api(environment="production") as api:
            name = f"gh-{unique}"
            api.register(name, "github")

            def refuse(*args: Any, **kwargs: Any) -> None:
                raise ConnectionError("broker at 10.0.0.7:6379 refused")

            sender: Any = api.client.app.state.tasks
            monkeypatch.setattr(sender, "send", refuse)
            body = push_body()
            response = api.push("github", name, body, github(body, delivery=f"down-{unique}"))

            assert response.status_code == 503
            assert response.json() == {"error": "temporarily unavailable; retry"}
            assert "10.0.0.7" not in response.text
            [record] = JobStore(api.redis).for_repo(name)
            assert record.state == "failed"
            assert api.queued() == 0

            monkeypatch.undo()  # the broker is back: the host's retry of that delivery lands
            retried = api.push("github", name, body, github(body, delivery=f"down-{unique}"))
            assert retried.status_code == 202
            assert api.queued() == 1

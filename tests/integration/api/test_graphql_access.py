"""Access control on /graphql: who may call, which scopes mutate, which repositories show."""

from __future__ import annotations

import subprocess
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from strata.errors import ConfigError
from strata.jobstore import JobStore
from tests.integration.api.conftest import SHA_A, SHA_B, Api

JOBS = "query J($r: String!) { jobs(repository: $r) { id repo state ref after } }"
REINDEX = (
    "mutation R($r: String!, $after: String, $ref: String) "
    "{ reindex(repository: $r, after: $after, ref: $ref) { id repo state ref after } }"
)
REGISTER = (
    "mutation G($name: String!, $secret: String!) { registerRepository(name: $name, "
    'provider: GITHUB, webhookSecret: $secret, url: "https://git.example/x") '
    "{ name provider defaultBranch webhookPath } }"
)


def codes(response: Any) -> list[str]:
    return [e["extensions"]["code"] for e in response.json().get("errors", [])]


class TestAuthentication:
    """No key, a bad key, a revoked or expired key: 401 before any GraphQL runs."""

    def test_no_key_is_401(self, api: Api) -> None:
        response = api.gql("{ version }", None)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert codes(response) == ["UNAUTHORIZED"]

    def test_valid_key(self, api: Api) -> None:
        response = api.gql("{ version }", api.key())
        assert response.status_code == 200
        assert response.json()["data"]["version"]

    def test_wrong_secret_for_a_real_key_id(self, api: Api) -> None:
        token = api.key()
        forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
        assert api.gql("{ version }", forged).status_code == 401

    def test_unknown_key(self, api: Api) -> None:
        assert api.gql("{ version }", "stk_0123456789abcdef_" + "A" * 43).status_code == 401

    def test_garbage_bearer(self, api: Api) -> None:
        assert api.gql("{ version }", "not-a-key").status_code == 401

    def test_other_scheme(self, api: Api) -> None:
        response = api.client.post(
            "/graphql", json={"query": "{ version }"}, headers={"Authorization": "Basic YTpi"}
        )
        assert response.status_code == 401

    def test_revoked_key_is_401(self, api: Api) -> None:
        record, token = api.keys.create(scopes=["read"], repos=["*"])
        assert api.gql("{ version }", token).status_code == 200
        api.keys.revoke(record.key_id)
        assert api.gql("{ version }", token).status_code == 401

    def test_revocation_reaches_a_caching_process(self, make_api: Any) -> None:
        with make_api(api_key_cache_s=0.5) as api:
            record, token = api.keys.create(scopes=["read"], repos=["*"])
            assert api.gql("{ version }", token).status_code == 200
            api.keys.revoke(record.key_id)
            time.sleep(0.6)
            assert api.gql("{ version }", token).status_code == 401

    def test_expired_key_is_401(self, api: Api) -> None:
        _, token = api.keys.create(scopes=["read"], repos=["*"], expires_in=timedelta(seconds=1))
        assert api.gql("{ version }", token).status_code == 200
        time.sleep(1.1)
        assert api.gql("{ version }", token).status_code == 401

    def test_development_without_opt_in_still_needs_a_key(self, make_api: Any) -> None:
        with make_api(environment="development") as api:
            assert api.gql("{ version }", None).status_code == 401

    def test_development_anonymous_reads_when_enabled(self, make_api: Any, unique: str) -> None:
        with make_api(environment="development", dev_anonymous_reads=True) as api:
            assert api.gql("{ version }", None).status_code == 200
            response = api.gql(REINDEX, None, {"r": f"r-{unique}", "after": SHA_B})
            assert codes(response) == ["FORBIDDEN"]

    def test_anonymous_reads_outside_development_refuse_to_start(self, make_api: Any) -> None:
        with pytest.raises(ConfigError, match="only allowed"), make_api(dev_anonymous_reads=True):
            pass


class TestScopes:
    """Mutations need write or admin: a missing scope is a GraphQL error with code FORBIDDEN."""

    def test_read_key_cannot_reindex(self, api: Api, unique: str) -> None:
        name = f"r-{unique}"
        api.register(name)
        response = api.gql(REINDEX, api.key("read", name), {"r": name, "after": SHA_B})
        assert response.status_code == 200
        assert codes(response) == ["FORBIDDEN"]
        assert response.json()["data"] is None
        assert api.queued() == 0

    def test_write_key_for_another_repository_cannot_reindex(self, api: Api, unique: str) -> None:
        name = f"r-{unique}"
        api.register(name)
        response = api.gql(
            REINDEX, api.key("write", f"other-{unique}"), {"r": name, "after": SHA_B}
        )
        assert codes(response) == ["FORBIDDEN"]
        assert api.queued() == 0

    def test_write_key_reindexes_with_explicit_after(self, api: Api, unique: str) -> None:
        name = f"r-{unique}"
        api.register(name)
        response = api.gql(REINDEX, api.key("write", name), {"r": name, "after": SHA_B})
        job = response.json()["data"]["reindex"]
        assert job["state"] == "QUEUED"
        assert job["ref"] == "refs/heads/main"
        assert job["after"] == SHA_B
        assert api.queued() == 1
        assert JobStore(api.redis).get(job["id"]).params["before"] is None

    def test_reindex_resolves_after_in_the_local_clone(
        self, api: Api, unique: str, tmp_path: Path
    ) -> None:
        def git(*args: str) -> str:
            return subprocess.run(
                ["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True
            ).stdout.strip()

        git("init", "-q", "-b", "trunk")
        git("-c", "user.email=a@b", "-c", "user.name=A", "commit", "-q", "--allow-empty", "-m", "x")
        name = f"local-{unique}"
        api.registry.register(
            name=name,
            provider="github",
            secret="s" * 20,
            default_branch="trunk",
            path=str(tmp_path),
        )
        job = api.gql(REINDEX, api.key("write", name), {"r": name}).json()["data"]["reindex"]
        assert job["ref"] == "refs/heads/trunk"
        assert job["after"] == git("rev-parse", "HEAD")

    def test_reindex_without_after_or_clone_is_a_validation_error(
        self, api: Api, unique: str
    ) -> None:
        name = f"r-{unique}"
        api.register(name)
        response = api.gql(REINDEX, api.key("write", name), {"r": name})
        assert codes(response) == ["VALIDATION_ERROR"]
        assert api.queued() == 0

    @pytest.mark.parametrize(
        ("variables", "code"),
        [
            ({"after": "HEAD"}, "VALIDATION_ERROR"),
            ({"after": SHA_A.upper()}, "VALIDATION_ERROR"),
            ({"after": SHA_B, "ref": "refs/heads/a..b"}, "VALIDATION_ERROR"),
            ({"after": SHA_B, "ref": "--upload-pack=x"}, "VALIDATION_ERROR"),
        ],
    )
    def test_reindex_bad_input(
        self, api: Api, unique: str, variables: dict[str, str], code: str
    ) -> None:
        name = f"r-{unique}"
        api.register(name)
        response = api.gql(REINDEX, api.key("write", name), {"r": name, **variables})
        assert codes(response) == [code]
        assert api.queued() == 0

    def test_reindex_of_unregistered_repository(self, api: Api, unique: str) -> None:
        name = f"r-{unique}"
        response = api.gql(REINDEX, api.key("write", name), {"r": name, "after": SHA_B})
        assert codes(response) == ["NOT_FOUND"]

    def test_write_key_cannot_register(self, api: Api, unique: str) -> None:
        response = api.gql(
            REGISTER, api.key("read,write"), {"name": f"r-{unique}", "secret": "s" * 20}
        )
        assert codes(response) == ["FORBIDDEN"]
        assert api.registry.get(f"r-{unique}") is None

    def test_admin_registers_and_the_secret_never_comes_back(self, api: Api, unique: str) -> None:
        name = f"r-{unique}"
        secret = "a-very-secret-value-123"
        response = api.gql(REGISTER, api.key("admin"), {"name": name, "secret": secret})
        data = response.json()["data"]["registerRepository"]
        assert data == {
            "name": name,
            "provider": "GITHUB",
            "defaultBranch": "main",
            "webhookPath": f"/webhooks/github/{name}",
        }
        assert secret not in response.text
        stored = api.registry._gateway.read(
            "MATCH (r:RepoRegistration {name: $n}) RETURN r {.*} AS r", n=name
        )[0]["r"]
        assert secret not in str(stored)
        again = api.gql(REGISTER, api.key("admin"), {"name": name, "secret": secret})
        assert codes(again) == ["VALIDATION_ERROR"]

    def test_register_bad_input(self, api: Api, unique: str) -> None:
        admin = api.key("admin")
        for variables in (
            {"name": "../etc", "secret": "s" * 20},
            {"name": f"r-{unique}", "secret": "short"},
            {"name": f"r-{unique}", "secret": "s" * 20 + "\n"},
        ):
            assert codes(api.gql(REGISTER, admin, variables)) == ["VALIDATION_ERROR"]


class TestRepositoryVisibility:
    """A key sees only its repositories' jobs; another repository's jobs simply do not exist."""

    def test_key_for_a_cannot_see_b(self, api: Api, unique: str) -> None:
        a, b = f"a-{unique}", f"b-{unique}"
        api.register(a)
        api.register(b)
        job_b = api.gql(REINDEX, api.key("write", b), {"r": b, "after": SHA_B}).json()
        job_b_id = job_b["data"]["reindex"]["id"]
        key_a = api.key("read", a)
        listed = api.gql(JOBS, key_a, {"r": b}).json()
        assert listed == {"data": {"jobs": []}}
        one = api.gql("query O($id: ID!) { job(id: $id) { id } }", key_a, {"id": job_b_id})
        assert one.json() == {"data": {"job": None}}

    def test_key_for_b_sees_b(self, api: Api, unique: str) -> None:
        b = f"b-{unique}"
        api.register(b)
        key_b = api.key("write", b)
        job_id = api.gql(REINDEX, key_b, {"r": b, "after": SHA_B}).json()["data"]["reindex"]["id"]
        listed = api.gql(JOBS, key_b, {"r": b}).json()["data"]["jobs"]
        assert [job["id"] for job in listed] == [job_id]
        one = api.gql("query O($id: ID!) { job(id: $id) { id repo } }", key_b, {"id": job_id})
        assert one.json()["data"]["job"] == {"id": job_id, "repo": b}

    def test_missing_job_is_null(self, api: Api) -> None:
        response = api.gql('{ job(id: "does-not-exist") { id } }', api.key())
        assert response.json() == {"data": {"job": None}}

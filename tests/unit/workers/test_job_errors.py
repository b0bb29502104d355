"""What a client sees of a failed job: a typed error, and no path of the server."""

from __future__ import annotations

from pathlib import Path

from celery.exceptions import TimeLimitExceeded, WorkerLostError

from strata.errors import GitError
from strata_workers.runner import public_error, scrub_paths, unexpected
from strata_workers.signals import describe


class TestDescribe:
    """Each way a task can end without recording itself maps to one error code."""

    def test_hard_time_limit(self) -> None:
        error = describe(TimeLimitExceeded(60), "job1", limit_s=60)
        assert error["code"] == "time_limit"
        assert "60 s" in error["message"]

    def test_lost_pool_child(self) -> None:
        assert describe(WorkerLostError("gone"), "job1", limit_s=60)["code"] == "worker_lost"

    def test_a_strata_error_keeps_its_code(self) -> None:
        assert describe(GitError("bad ref"), "job1", limit_s=60)["code"] == "git_error"

    def test_anything_else_is_an_internal_error_without_its_text(self) -> None:
        error = describe(KeyError("/etc/passwd secret"), "job1", limit_s=60)
        assert error["code"] == "internal_error"
        assert "KeyError" in error["message"]
        assert "secret" not in str(error)
        assert "job1" in error["hint"]


class TestScrub:
    """Absolute paths that exist here are cut to their last part; other text stays."""

    def test_existing_paths_are_cut(self, tmp_path: Path) -> None:
        (tmp_path / "repo").mkdir()
        text = f"git could not read {tmp_path}/repo/objects (at {tmp_path}/repo)"
        assert scrub_paths(text) == "git could not read <server>/objects (at <server>/repo)"

    def test_refs_routes_and_urls_stay(self) -> None:
        text = "refs/heads/main, route GET /users/{id}, https://git.example/a/b, /nonexistent/x/y"
        assert scrub_paths(text) == text

    def test_public_error_scrubs_message_and_drops_details_with_paths(self, tmp_path: Path) -> None:
        exc = GitError(f"no repository at {tmp_path}", hint=f"check {tmp_path}", path=str(tmp_path))
        out = public_error(exc)
        assert str(tmp_path) not in str(out)
        assert "details" not in out
        assert out["code"] == "git_error"

    def test_unexpected_names_the_type_only(self) -> None:
        error = unexpected(ValueError("/root/.ssh/id_rsa"), "abc").to_dict()
        assert error["message"] == "the job failed on an unexpected ValueError"

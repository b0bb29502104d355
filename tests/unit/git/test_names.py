"""Shas and refs are validated before they reach git (argument lists, never a shell)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata.errors import GitError, ValidationError
from strata.git import branch_ref, check_ref, require_sha, resolve_commit, valid_sha
from tests.gitrepo import GitRepo


class TestSha:
    """Only full lowercase 40- or 64-hex object names pass."""

    @pytest.mark.parametrize("sha", ["a" * 40, "0123456789abcdef" * 4, "f" * 64])
    def test_valid(self, sha: str) -> None:
        assert valid_sha(sha)

    @pytest.mark.parametrize(
        "sha", ["a" * 39, "a" * 41, "A" * 40, "g" * 40, "a" * 40 + "\n", "", "a" * 63, None, 7]
    )
    def test_invalid(self, sha: object) -> None:
        assert not valid_sha(sha)

    def test_require_sha_names_the_field(self) -> None:
        with pytest.raises(ValidationError, match="after"):
            require_sha("HEAD", what="after")


class TestRef:
    """Refs must be full and accepted by `git check-ref-format`."""

    @pytest.mark.parametrize("ref", ["refs/heads/main", "refs/tags/v1.2.3", "refs/heads/feat/x-y"])
    def test_valid(self, ref: str) -> None:
        assert check_ref(ref) == ref

    @pytest.mark.parametrize(
        "ref",
        [
            "main",
            "refs/heads/a..b",
            "refs/heads/with space",
            "refs/heads/x.lock",
            "refs/heads/end/",
            "refs/heads/a~1",
            "refs/heads/a^",
            "refs/heads/a:b",
            "refs/heads/@{x}",
            "refs/heads/a\x00b",
            "refs/heads/" + "x" * 300,
            "--upload-pack=evil",
            "",
        ],
    )
    def test_invalid(self, ref: str) -> None:
        with pytest.raises(ValidationError):
            check_ref(ref)

    def test_branch_name_becomes_full_ref(self) -> None:
        assert branch_ref("main") == "refs/heads/main"
        assert branch_ref("refs/heads/dev") == "refs/heads/dev"

    def test_branch_name_cannot_look_like_an_option(self) -> None:
        with pytest.raises(ValidationError):
            branch_ref("--upload-pack=x")


class TestResolve:
    """A ref is resolved to a full sha in a local clone."""

    def test_resolves_and_refuses(self, tmp_path: Path) -> None:
        head = GitRepo(tmp_path).commit("x", datetime(2025, 1, 1, tzinfo=UTC))
        assert resolve_commit(tmp_path, "refs/heads/main") == head
        with pytest.raises(GitError, match="cannot resolve"):
            resolve_commit(tmp_path, "refs/heads/nope")
        with pytest.raises(GitError):
            resolve_commit(tmp_path / "missing", "refs/heads/main")

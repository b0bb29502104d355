"""The git package on a real local repository: walks, blobs, and errors without paths."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.errors import GitError
from strata.git import Git, open_repository, public_text, run_git
from tests.gitrepo import GitRepo

T0 = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    made = GitRepo(tmp_path / "srv" / "secret-place" / "repo")
    made.write("a.py", "x = 1\n")
    made.commit("one", T0)
    made.write("a.py", "x = 2\n")
    made.write("b.py", "y = 1\n")
    made.commit("two", T0 + timedelta(hours=1))
    return made


class TestWalks:
    """History, diffs, trees and blobs read what git holds."""

    def test_history_tree_blobs_diff(self, repo: GitRepo) -> None:
        git = Git(repo.path)
        first, second = git.history("refs/heads/main")
        assert second == git.resolve("HEAD")
        assert git.commit(first).committed_at == T0
        assert git.is_ancestor(first, second)
        assert not git.is_ancestor(second, first)
        assert [c.sha for c in git.commits_between(first, second)] == [second]
        assert git.commit(second).parents == (first,)
        entries = {e.path: e for e in git.tree(second)}
        assert sorted(entries) == ["a.py", "b.py"]
        assert git.blobs([entries["a.py"].blob]) == {entries["a.py"].blob: b"x = 2\n"}
        assert {(c.status, c.path) for c in git.diff(first, second)} == {
            ("M", "a.py"),
            ("A", "b.py"),
        }
        assert sorted(git.files_changed(second)) == ["a.py", "b.py"]
        assert git.has_commit(first)
        assert not git.has_commit("0" * 40)
        assert git.last_change_time(second, "a.py") == git.commit(second).committed_at
        assert git.last_change_time(second, "never.py") is None

    def test_a_bad_sha_never_reaches_git(self, repo: GitRepo) -> None:
        with pytest.raises(GitError, match="not a commit sha"):
            Git(repo.path).tree("HEAD; rm -rf /")
        with pytest.raises(GitError, match="looks like an option"):
            Git(repo.path).resolve("--output=/tmp/x")


class TestErrorsHideServerPaths:
    """What a client can read never names a server path; the log keeps it."""

    def test_unresolvable_revision(self, repo: GitRepo) -> None:
        with pytest.raises(GitError) as caught:
            Git(repo.path).resolve("refs/heads/nope")
        assert "cannot resolve" in str(caught.value)
        assert str(repo.path) not in str(caught.value)
        assert "secret-place" not in str(caught.value)

    def test_missing_and_non_repositories(self, tmp_path: Path) -> None:
        plain = tmp_path / "srv" / "plain"
        plain.mkdir(parents=True)
        for path in (plain, tmp_path / "srv" / "missing"):
            with pytest.raises(GitError) as caught:
                Git(path).check()
            assert "srv" not in str(caught.value)
        with pytest.raises(GitError, match="not a git repository"):
            Git(plain).check()

    def test_failed_command_message_is_scrubbed(self, tmp_path: Path) -> None:
        target = tmp_path / "srv" / "nowhere"
        with pytest.raises(GitError) as caught:
            run_git("log", "-1", repo=target)
        assert str(tmp_path) not in str(caught.value)
        assert "git could not log" in str(caught.value)

    def test_failed_clone_names_no_path(self, tmp_path: Path) -> None:
        with pytest.raises(GitError) as caught:
            open_repository(
                "demo", url=str(tmp_path / "srv" / "absent.git"), path=None, mirrors=tmp_path / "m"
            )
        assert "could not clone the repository 'demo'" in str(caught.value)
        assert str(tmp_path) not in str(caught.value)

    def test_public_text(self) -> None:
        assert public_text("fatal: '/srv/x/y.git' is wrong") == "fatal: '<path>' is wrong"
        assert public_text("in /srv/m/r.git now", Path("/srv/m/r.git")) == (
            "in the repository's mirror now"
        )


class TestMirror:
    """A registration with a URL gets a mirror clone, fetched again on the next open."""

    def test_clone_then_fetch(self, repo: GitRepo, tmp_path: Path) -> None:
        mirrors = tmp_path / "mirrors"
        first = open_repository("demo", url=str(repo.path), path=None, mirrors=mirrors)
        head = Git(repo.path).resolve("HEAD")
        assert first.resolve("refs/heads/main") == head
        repo.write("c.py", "z = 3\n")
        newer = repo.commit("three", T0 + timedelta(hours=2))
        again = open_repository("demo", url=str(repo.path), path=None, mirrors=mirrors)
        assert again.path == first.path
        assert again.resolve("refs/heads/main") == newer != head

    def test_unsafe_names_are_refused(self, tmp_path: Path) -> None:
        with pytest.raises(GitError, match="unsafe"):
            open_repository("../x", url="https://h/x", path=None, mirrors=tmp_path)
        with pytest.raises(GitError, match="unsafe"):
            open_repository("x", url="--upload-pack=evil", path=None, mirrors=tmp_path)

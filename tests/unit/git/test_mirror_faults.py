"""What the git package does when a mirror cannot serve a push at once, and with
file names that are not UTF-8 (real git on throwaway repositories)."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.errors import CommitNotFound, GitError
from strata.git import Git, open_repository, readable_path
from tests.gitrepo import GitRepo

T0 = datetime(2025, 1, 1, tzinfo=UTC)
MISSING = "5" * 40
QUICK = (0.01, 0.01)  # the waits between looks, shortened for a unit test


@pytest.fixture
def source(tmp_path: Path) -> GitRepo:
    made = GitRepo(tmp_path / "srv" / "secret-place" / "source")
    for n in range(3):
        made.write(f"m{n}.py", f"x = {n}\n")
        made.commit(f"c{n}", T0 + timedelta(hours=n))
    return made


class TestTheCommitAPushNames:
    """A commit the mirror lacks is fetched, looked for again, or a typed refusal."""

    def test_the_fetch_brings_it(self, source: GitRepo, tmp_path: Path) -> None:
        mirrors = tmp_path / "mirrors"
        open_repository("demo", url=str(source.path), path=None, mirrors=mirrors)
        source.write("new.py", "y = 1\n")
        newer = source.commit("new", T0 + timedelta(days=1))
        git = open_repository(
            "demo", url=str(source.path), path=None, mirrors=mirrors, want=newer, delays=()
        )
        assert git.has_commit(newer)

    def test_a_commit_that_never_comes_is_commit_not_found(
        self, source: GitRepo, tmp_path: Path
    ) -> None:
        for url, path in ((str(source.path), None), (None, str(source.path))):
            with pytest.raises(CommitNotFound) as caught:
                open_repository(
                    "demo", url=url, path=path, mirrors=tmp_path / "m", want=MISSING, delays=QUICK
                )
            assert caught.value.code == "commit_not_found"
            assert MISSING[:12] in caught.value.message
            assert "looked 3 times" in caught.value.message
            assert str(tmp_path) not in str(caught.value)

    def test_resolving_a_missing_commit_is_typed(self, source: GitRepo) -> None:
        with pytest.raises(CommitNotFound, match="cannot resolve"):
            Git(source.path).resolve(MISSING)


class TestShallowAndRemovedMirrors:
    """A shallow mirror is deepened; a removed one says so."""

    def test_a_shallow_mirror_gets_the_whole_history(self, source: GitRepo, tmp_path: Path) -> None:
        mirrors = tmp_path / "mirrors"
        target = mirrors / "demo.git"
        subprocess.run(
            [
                "git",
                "clone",
                "-q",
                "--mirror",
                "--depth",
                "1",
                f"file://{source.path}",
                str(target),
            ],
            check=True,
        )
        first = Git(source.path).history("refs/heads/main")[0]
        assert not Git(target).has_commit(first)
        git = open_repository("demo", url=str(source.path), path=None, mirrors=mirrors)
        assert git.has_commit(first)
        assert not (target / "shallow").exists()

    def test_a_removed_mirror_names_what_happened(self, source: GitRepo, tmp_path: Path) -> None:
        git = open_repository("demo", url=str(source.path), path=None, mirrors=tmp_path / "m")
        head = git.resolve("refs/heads/main")
        subprocess.run(["rm", "-rf", str(git.path)], check=True)
        for read in (git.check, lambda: git.resolve(head)):
            with pytest.raises(GitError, match="mirror was removed") as caught:
                read()
            assert not isinstance(caught.value, CommitNotFound)
            assert str(tmp_path) not in str(caught.value)


class TestNamesThatAreNotUtf8:
    """A file name git holds in another encoding reads as if it were not there."""

    def test_diff_and_files_changed_leave_them_out(self, tmp_path: Path) -> None:
        repo = GitRepo(tmp_path / "r")
        root = os.fsencode(repo.path)
        latin1 = os.path.join(root, b"caf\xe9.py")
        repo.write("kept.py", "x = 1\n")
        with open(latin1, "wb") as out:
            out.write(b"x = 1\n")
        c1 = repo.commit("one", T0)
        names = {e.path for e in Git(repo.path).tree(c1)}
        assert "kept.py" in names
        assert [readable_path(n) for n in sorted(names)] == [False, True]  # "caf\udce9.py"

        with open(latin1, "ab") as out:  # a change to it alone
            out.write(b"y = 2\n")
        c2 = repo.commit("two", T0 + timedelta(hours=1))
        assert Git(repo.path).diff(c1, c2) == []
        assert Git(repo.path).files_changed(c2) == []

        os.rename(latin1, os.path.join(root, b"cafe.py"))  # renamed to a readable name
        c3 = repo.commit("three", T0 + timedelta(hours=2))
        assert [(c.status, c.path) for c in Git(repo.path).diff(c2, c3)] == [("A", "cafe.py")]

        os.rename(os.path.join(root, b"kept.py"), os.path.join(root, b"k\xe9pt.py"))
        c4 = repo.commit("four", T0 + timedelta(hours=3))
        assert [(c.status, c.path) for c in Git(repo.path).diff(c3, c4)] == [("D", "kept.py")]

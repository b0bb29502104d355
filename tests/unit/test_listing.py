"""A kept tree listing patched by the diff to another commit reads as a full listing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import permutations
from pathlib import Path

import pytest

from strata.code.indexer import _supported
from strata.code.listing import MAX_PATCHED, Listing, Listings, list_tree
from strata.git import Git, TreeEntry
from tests.gitrepo import GitRepo

T0 = datetime(2025, 1, 1, tzinfo=UTC)
MAX_BYTES = 1000


class NoFullListing(Git):
    """A repository whose whole tree may not be listed: only a patch can answer."""

    def tree(self, sha: str) -> list[TreeEntry]:
        raise AssertionError("listed the whole tree")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Commits that add, change, delete, retype and move paths, with names that sort
    and match awkwardly, manifests, skipped files and a name that is not UTF-8."""
    repo = GitRepo(tmp_path_factory.mktemp("listing") / "repo")
    when = iter(T0 + timedelta(hours=h) for h in range(20))
    shas = []
    repo.write("a.py", "x = 1\n")
    repo.write("a.b", "not code\n")
    repo.write("a0", "not code\n")
    repo.write("a/x.py", "y = 1\n")
    repo.write("*.py", "star = 1\n")
    repo.write("sp ace/q?.py", "q = 1\n")
    repo.write("node_modules/pkg/index.js", "module.exports = 1\n")
    repo.write("node_modules/pkg/package.json", '{"name": "vendored"}\n')
    repo.write("big.py", "# " + "x" * 2 * MAX_BYTES + "\n")
    repo.write("api_pb2.py", "GENERATED = 1\n")
    repo.write("pyproject.toml", '[project]\nname = "first"\n')
    repo.write("lib/__init__.py", "")
    (repo.path / b"caf\xe9.py".decode(errors="surrogateescape")).write_bytes(b"c = 1\n")
    repo.symlink("link.py", "a.py")
    shas.append(repo.commit("one", next(when)))
    repo.write("a.py", "x = 2\n")
    repo.write("a-b.py", "ab = 1\n")
    repo.write("a/z.py", "z = 1\n")
    repo.delete("*.py")
    repo.write("pyproject.toml", '[project]\nname = "second"\n')
    (repo.path / "link.py").unlink()
    repo.write("link.py", "now_a_file = 1\n")
    repo.write("big.py", "small = 1\n")
    shas.append(repo.commit("two", next(when)))
    repo.delete("a0")
    repo.write("a0/inner.py", "inner = 1\n")
    repo.write("web/package.json", '{"name": "web"}\n')
    repo.write("web/index.js", "export const w = 1\n")
    repo.rename("a/x.py", "b/x.py")
    shas.append(repo.commit("three", next(when)))
    shas.append(repo.commit("empty", next(when)))
    repo.write("pyproject.toml", "not toml at all [[[\n")
    repo.write("web/more.ts", "export const m = 1\n")
    shas.append(repo.commit("five", next(when)))
    return repo.path, shas


def _full(path: Path, sha: str) -> Listing:
    return list_tree(Git(path), sha, _supported, MAX_BYTES)


def _same(got: Listing, want: Listing) -> None:
    assert got.commit == want.commit
    assert got.entries == want.entries
    assert got.reasons == want.reasons
    assert got.packages == want.packages
    assert got.selection() == want.selection()


class TestPatchedListing:
    def test_every_pair_of_commits_patches_to_the_full_listing(
        self, history: tuple[Path, list[str]]
    ) -> None:
        path, shas = history
        for before, after in permutations(shas, 2):  # forward, backward and sideways
            kept = _full(path, before)
            patched = list_tree(NoFullListing(path), after, _supported, MAX_BYTES, kept)
            _same(patched, _full(path, after))

    def test_the_listing_judges_and_counts_what_a_run_skips(
        self, history: tuple[Path, list[str]]
    ) -> None:
        path, shas = history
        listing = _full(path, shas[0])
        selection = listing.selection()
        assert [e.path for e in selection.files] == [
            "*.py",
            "a.py",
            "a/x.py",
            "lib/__init__.py",
            "sp ace/q?.py",
        ]
        assert dict(selection.skipped) == {
            "generated": 1,
            "too_large": 1,
            "symlink": 1,
            "path_not_utf8": 1,
            "vendored_or_generated_dir": 1,
        }
        # A vendored manifest is not read: its package is named for its folder.
        assert [p.name for p in listing.packages] == ["first", "pkg"]
        assert [p.name for p in _full(path, shas[2]).packages] == ["second", "pkg", "web"]

    def test_a_selection_is_the_callers_own(self, history: tuple[Path, list[str]]) -> None:
        path, shas = history
        listing = _full(path, shas[0])
        first = listing.selection()
        first.skipped["binary"] += 3
        first.files.clear()
        assert "binary" not in listing.selection().skipped
        assert listing.selection().files

    def test_a_commit_the_mirror_lacks_lists_the_whole_tree(
        self, history: tuple[Path, list[str]]
    ) -> None:
        path, shas = history
        kept = _full(path, shas[0])
        gone = Listing("f" * 40, kept.entries, kept.reasons, kept.packages)
        _same(list_tree(Git(path), shas[1], _supported, MAX_BYTES, gone), _full(path, shas[1]))

    def test_the_same_commit_is_the_kept_listing(self, history: tuple[Path, list[str]]) -> None:
        path, shas = history
        kept = _full(path, shas[1])
        assert list_tree(NoFullListing(path), shas[1], _supported, MAX_BYTES, kept) is kept


class TestPatchBound:
    """At most MAX_PATCHED changed paths are patched; one more lists the whole tree."""

    @pytest.mark.parametrize(
        ("changed", "patched"), [(MAX_PATCHED, True), (MAX_PATCHED + 1, False)]
    )
    def test_each_side_of_the_bound(self, tmp_path: Path, changed: int, patched: bool) -> None:
        repo = GitRepo(tmp_path / "repo")
        repo.write("keep.py", "k = 1\n")
        before = repo.commit("one", T0)
        for i in range(changed):
            repo.write(f"pkg/m{i:04}.py", f"v = {i}\n")
        after = repo.commit("two", T0 + timedelta(hours=1))
        git = Git(repo.path)
        changes = git.tree_changes(before, after, limit=MAX_PATCHED)
        assert (changes is not None) is patched
        kept = _full(repo.path, before)
        if patched:
            listing = list_tree(NoFullListing(repo.path), after, _supported, MAX_BYTES, kept)
        else:
            with pytest.raises(AssertionError, match="listed the whole tree"):
                list_tree(NoFullListing(repo.path), after, _supported, MAX_BYTES, kept)
            listing = list_tree(git, after, _supported, MAX_BYTES, kept)
        _same(listing, _full(repo.path, after))
        assert len(listing.selection().files) == changed + 1


class TestListings:
    def test_the_least_recently_used_goes_past_the_limit(self) -> None:
        listings = Listings(limit=2)
        one, two, three = (Listing(c * 40, (), {}, ()) for c in "abc")
        listings.keep("r", "one", one)
        listings.keep("r", "two", two)
        assert listings.get("r", "one") is one  # now the most recent
        listings.keep("r", "three", three)
        assert listings.get("r", "two") is None
        assert listings.get("r", "one") is one
        assert listings.get("r", "three") is three

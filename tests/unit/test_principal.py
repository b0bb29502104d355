"""The Principal: scopes imply downwards, repositories bound read and write (pure)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from strata.errors import Forbidden
from strata.security import Principal


def principal(scopes: set[str], repos: set[str]) -> Principal:
    return Principal(key_id="k", scopes=frozenset(scopes), repos=frozenset(repos))  # type: ignore[arg-type]


@dataclass
class Item:
    repo: str


class TestScopes:
    """admin ⊇ write ⊇ read; admin is global, read and write are per repository."""

    def test_read_key_reads_only_its_repos(self) -> None:
        p = principal({"read"}, {"a"})
        assert p.can_read("a")
        assert not p.can_read("b")
        assert not p.can_write("a")

    def test_write_implies_read(self) -> None:
        p = principal({"write"}, {"a"})
        assert p.can_read("a")
        assert p.can_write("a")
        assert not p.is_admin()

    def test_admin_is_global_but_does_not_widen_repos(self) -> None:
        p = principal({"admin"}, {"a"})
        assert p.is_admin()
        assert p.can("admin")
        assert p.can_write("a")
        assert not p.can_read("b")

    def test_star_means_every_repository(self) -> None:
        p = principal({"read"}, {"*"})
        assert p.can_read("anything")
        assert p.readable_repos().all

    def test_nobody_can_do_nothing(self) -> None:
        p = Principal.nobody()
        assert not p.can_read("a")
        assert not p.readable_repos().all
        assert not p.readable_repos().names

    def test_anonymous_reader_reads_but_never_writes(self) -> None:
        p = Principal.anonymous_reader()
        assert p.can_read("a")
        assert not p.can_write("a")
        assert not p.is_admin()


class TestRequireAndFilter:
    """Resolvers either raise Forbidden or filter silently."""

    def test_require_raises_forbidden(self) -> None:
        with pytest.raises(Forbidden, match="'write' scope on repository 'a'"):
            principal({"read"}, {"a"}).require("write", "a")

    def test_require_admin_without_admin(self) -> None:
        with pytest.raises(Forbidden):
            principal({"write"}, {"*"}).require("admin")

    def test_require_passes(self) -> None:
        principal({"write"}, {"a"}).require("write", "a")

    def test_visible_filters_items(self) -> None:
        items = [Item("a"), Item("b"), Item("a")]
        assert principal({"read"}, {"a"}).visible(items, lambda i: i.repo) == [items[0], items[2]]

    def test_repo_set_params_for_cypher(self) -> None:
        assert principal({"read"}, {"b", "a"}).readable_repos().as_params() == {
            "all_repos": False,
            "repos": ["a", "b"],
        }
        assert principal({"read"}, {"*"}).readable_repos().as_params()["all_repos"] is True

    def test_no_read_scope_reads_nothing(self) -> None:
        repos = Principal(key_id="k", repos=frozenset({"*"})).readable_repos()
        assert "a" not in repos
        assert repos.filter(["a"]) == []

"""callersPage / calleesPage over GraphQL: a cut list says so, pages join up to the whole
walk, and the plain list fields answer as before."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.code.indexer import CodeIndexer
from strata.git import Git
from tests.gitrepo import GitRepo
from tests.integration.api.conftest import Api, api, make_api

__all__ = ["api", "make_api"]  # the API fixtures, shared with tests/integration/api

C1 = datetime(2025, 5, 1, tzinfo=UTC)
CALLERS = 7
LIB = (
    "def base():\n    return 1\n\n\n"
    + "".join(f"def c{i}():\n    return base()\n\n\n" for i in range(CALLERS))
    + "def hub():\n"
    + "".join(f"    c{i}()\n" for i in range(CALLERS))
)

PAGE = """query($id: ID!, $first: Int!, $after: String, $depth: Int!) {
  callersPage(symbol: $id, first: $first, after: $after, depth: $depth) {
    nodes { qualifiedName depth }
    pageInfo { hasNextPage endCursor } totalCount totalCapped unresolved { count } } }"""
CALLEES_PAGE = """query($id: ID!, $first: Int!, $after: String) {
  calleesPage(symbol: $id, first: $first, after: $after) {
    nodes { qualifiedName } pageInfo { hasNextPage endCursor } totalCount
    unresolved { count } } }"""
LIST = "query($id: ID!) { callers(symbol: $id, first: 3) { qualifiedName } }"


@pytest.fixture
def repo(tmp_path: Path, indexer: CodeIndexer, unique: str) -> str:
    git = GitRepo(tmp_path / "pages")
    git.write("lib.py", LIB)
    sha = git.commit("first", C1)
    name = f"pages-{unique}"
    indexer.index(Git(git.path), name, "main", sha)
    return name


def ask(api: Api, query: str, token: str, **variables: Any) -> dict[str, Any]:
    answer: dict[str, Any] = api.gql(query, token, variables).json()
    assert "errors" not in answer, answer
    return answer["data"]


def key(repo: str, qualname: str) -> str:
    return f"{repo}|main|lib.py|{qualname}"


class TestCallPages:
    """Every page says whether more follow; the pages together are the whole walk."""

    def test_pages_join_up(self, api: Api, repo: str) -> None:
        token = api.key()
        seen: list[str] = []
        after: str | None = None
        pages = 0
        while True:
            page = ask(api, PAGE, token, id=key(repo, "base"), first=3, after=after, depth=1)
            page = page["callersPage"]
            assert page["totalCount"] == CALLERS
            assert page["totalCapped"] is False
            assert page["unresolved"] is None
            seen += [n["qualifiedName"] for n in page["nodes"]]
            pages += 1
            if not page["pageInfo"]["hasNextPage"]:
                break
            assert len(page["nodes"]) == 3
            after = page["pageInfo"]["endCursor"]
        assert pages == 3
        assert sorted(seen) == sorted(f"lib.c{i}" for i in range(CALLERS))
        assert len(set(seen)) == CALLERS

    def test_a_whole_list_has_no_next_page(self, api: Api, repo: str) -> None:
        page = ask(api, PAGE, api.key(), id=key(repo, "base"), first=50, after=None, depth=2)
        page = page["callersPage"]
        names = [n["qualifiedName"] for n in page["nodes"]]
        assert page["pageInfo"]["hasNextPage"] is False
        assert page["totalCount"] == CALLERS + 1 == len(names)  # hub at depth 2
        assert names[-1] == "lib.hub"

    def test_callees_page(self, api: Api, repo: str) -> None:
        page = ask(api, CALLEES_PAGE, api.key(), id=key(repo, "hub"), first=5, after=None)
        page = page["calleesPage"]
        assert len(page["nodes"]) == 5
        assert page["pageInfo"]["hasNextPage"] is True
        assert page["totalCount"] == CALLERS
        assert page["unresolved"] == {"count": 0}

    def test_list_field_unchanged(self, api: Api, repo: str) -> None:
        names = [
            c["qualifiedName"] for c in ask(api, LIST, api.key(), id=key(repo, "base"))["callers"]
        ]
        page = ask(api, PAGE, api.key(), id=key(repo, "base"), first=3, after=None, depth=1)
        assert names == [n["qualifiedName"] for n in page["callersPage"]["nodes"]]

    @pytest.mark.parametrize("cursor", ["bm9wZQ==", "%%%", "b2Zmc2V0OjEwMDAw"])
    def test_a_forged_cursor_is_refused(self, api: Api, repo: str, cursor: str) -> None:
        answer = api.gql(
            PAGE, api.key(), {"id": key(repo, "base"), "first": 3, "after": cursor, "depth": 1}
        ).json()
        assert answer["data"] is None
        assert answer["errors"][0]["extensions"]["code"] == "VALIDATION_ERROR"

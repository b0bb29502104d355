"""No silent empties over GraphQL: an empty answer says why, a malformed id is refused,
and a cut impact list says it was cut."""

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
BEFORE = "2025-04-01T00:00:00Z"
LIB = """\
def base():
    return 1


def a():
    return base()


def b():
    return base()


def c():
    return a()


def lonely():
    return 2
"""

CALLERS = """query($id: ID!, $asOf: AsOfInput) {
  callers(symbol: $id, asOf: $asOf) { qualifiedName } }"""
SYMBOL = "query($id: ID!, $asOf: AsOfInput) { symbol(id: $id, asOf: $asOf) { qualifiedName } }"
IMPACT = """query($id: ID!, $first: Int!) {
  impact(symbol: $id, first: $first) {
    callers { qualifiedName } totalCallers truncated truncatedLists } }"""


@pytest.fixture
def repo(tmp_path: Path, indexer: CodeIndexer, unique: str) -> str:
    git = GitRepo(tmp_path / "absence")
    git.write("lib.py", LIB)
    sha = git.commit("first", C1)
    name = f"absence-{unique}"
    indexer.index(Git(git.path), name, "main", sha)
    return name


def ask(api: Api, query: str, token: str, **variables: Any) -> dict[str, Any]:
    answer: dict[str, Any] = api.gql(query, token, variables).json()
    return answer


def reasons(answer: dict[str, Any]) -> list[dict[str, Any]]:
    assert "errors" not in answer, answer
    found: list[dict[str, Any]] = answer.get("extensions", {}).get("reasons", [])
    return found


def key(repo: str, qualname: str) -> str:
    return f"{repo}|main|lib.py|{qualname}"


class TestReasons:
    """Unknown repository, unknown id, a moment before the history: the same data, a reason."""

    def test_true_empty_has_no_reason(self, api: Api, repo: str) -> None:
        answer = ask(api, CALLERS, api.key(), id=key(repo, "lonely"))
        assert answer["data"]["callers"] == []
        assert reasons(answer) == []

    def test_before_history(self, api: Api, repo: str) -> None:
        token = api.key()
        answer = ask(api, CALLERS, token, id=key(repo, "base"), asOf={"validAt": BEFORE})
        assert answer["data"]["callers"] == []
        [why] = reasons(answer)
        assert why["code"] == "BEFORE_HISTORY"
        assert why["path"] == ["callers"]
        assert why["axis"] == "valid"
        assert datetime.fromisoformat(why["firstIndexedAt"]) == C1
        now = ask(api, CALLERS, token, id=key(repo, "base"))
        assert {c["qualifiedName"] for c in now["data"]["callers"]} == {"lib.a", "lib.b"}
        assert reasons(now) == []

    def test_unknown_symbol_in_a_known_repository(self, api: Api, repo: str) -> None:
        answer = ask(api, SYMBOL, api.key(), id=key(repo, "nothing_here"))
        assert answer["data"]["symbol"] is None
        [why] = reasons(answer)
        assert why["code"] == "NOT_FOUND"
        assert "at any time" in why["message"]

    def test_unknown_and_unreadable_repository_read_alike(self, api: Api, repo: str) -> None:
        unknown = ask(api, CALLERS, api.key(), id=key(f"{repo}-nope", "base"))
        hidden = ask(api, CALLERS, api.key(repos="someone-else"), id=key(repo, "base"))
        assert unknown["data"]["callers"] == hidden["data"]["callers"] == []
        [a], [b] = reasons(unknown), reasons(hidden)
        assert a["code"] == b["code"] == "NOT_FOUND"
        assert "is not indexed, or not readable with this key" in a["message"]
        assert a["message"].replace(f"{repo}-nope", repo) == b["message"]

    @pytest.mark.parametrize(
        ("query", "field"),
        [
            ("query($r: ID!) { history(id: $r) { validAt } }", "history"),
            (
                'query($r: String!) { changes(repository: $r, start: "2020-01-01T00:00:00Z", '
                'end: "2025-04-01T00:00:00Z") { change } }',
                "changes",
            ),
            ('query($r: String!) { file(repository: $r, path: "nope.py") { path } }', "file"),
            (
                'query($r: String!) { requirement(repository: $r, id: "REQ-999") { id } }',
                "requirement",
            ),
            (
                'query($r: String!) { testsFor(repository: $r, requirement: "REQ-999") { type } }',
                "testsFor",
            ),
            ("query($r: String!) { cards(repository: $r) { name } }", "cards"),
        ],
    )
    def test_every_read_says_why(self, api: Api, repo: str, query: str, field: str) -> None:
        subject = key(repo, "gone") if field == "history" else repo
        answer = ask(api, query, api.key(), r=subject)
        assert "errors" not in answer, answer
        assert answer["data"][field] in (None, [])
        [why] = reasons(answer)
        assert why["path"] == [field]
        assert why["code"] in ("NOT_FOUND", "BEFORE_HISTORY"), why
        if field == "changes":  # the window ends before the first indexed commit
            assert why["code"] == "BEFORE_HISTORY"

    def test_unknown_repository_everywhere(self, api: Api, repo: str) -> None:
        missing = f"{repo}-missing"
        answer = ask(
            api,
            """query($r: String!) { cards(repository: $r) { name }
              repository(name: $r) { name } decisions(repository: $r) { id }
              traceReport(repository: $r) { requirements } }""",
            api.key(),
            r=missing,
        )
        assert {tuple(w["path"]) for w in reasons(answer)} == {
            ("cards",),
            ("repository",),
            ("decisions",),
            ("traceReport",),
        }
        assert all("not indexed" in w["message"] for w in reasons(answer))


class TestMalformedIds:
    """An id that is not shaped like one is bad input: a VALIDATION_ERROR, nothing read."""

    @pytest.mark.parametrize("bad", ["base", "repo|main", "|main|lib.py|base", "a|b|c|d|e"])
    def test_symbol_ids(self, api: Api, bad: str) -> None:
        answer = ask(api, SYMBOL, api.key(), id=bad)
        assert answer["data"]["symbol"] is None
        [error] = answer["errors"]
        assert error["extensions"]["code"] == "VALIDATION_ERROR"
        assert "repo|ref|path|qualname" in error["message"]

    def test_callers_and_history(self, api: Api) -> None:
        token = api.key()
        for query in (CALLERS, "query($id: ID!) { history(id: $id) { validAt } }"):
            answer = ask(api, query, token, id="not-an-id")
            assert answer["errors"][0]["extensions"]["code"] == "VALIDATION_ERROR"


class TestImpactCut:
    """impact says which of its lists it cut, and how many callers it found."""

    def test_truncated(self, api: Api, repo: str) -> None:
        token = api.key()
        cut = ask(api, IMPACT, token, id=key(repo, "base"), first=1)["data"]["impact"]
        assert len(cut["callers"]) == 1
        assert cut["totalCallers"] == 3  # a, b, and c through a
        assert cut["truncated"] is True
        assert cut["truncatedLists"] == ["callers"]
        whole = ask(api, IMPACT, token, id=key(repo, "base"), first=10)["data"]["impact"]
        assert {c["qualifiedName"] for c in whole["callers"]} == {"lib.a", "lib.b", "lib.c"}
        assert whole["truncated"] is False
        assert whole["truncatedLists"] == []

"""impact through the real API says what it could not see (unresolved call sites)."""

from __future__ import annotations

from pathlib import Path

from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.ontology import Ontology
from tests.gitrepo import GitRepo
from tests.integration.api.conftest import Api, api, make_api
from tests.integration.code.test_calls_identity import GUESS_FILES, index_files
from tests.integration.code.test_reads_calls import C1, LIB, OTHER, TEST_USE, USE_V1, symbol_key

__all__ = ["api", "make_api"]  # the API fixtures, shared with tests/integration/api

IMPACT = """
query($id: ID!) {
  impact(symbol: $id) {
    tests { qualifiedName }
    unresolved { names count sample { path caller callee line } }
  }
}
"""


class TestImpactOverGraphQL:
    """An impact with no tests found still reports the unresolved sites that may reach it."""

    def test_unresolved_in_the_answer(
        self, tmp_path: Path, api: Api, indexer: CodeIndexer, ontology: Ontology, unique: str
    ) -> None:
        repo = GitRepo(tmp_path / "gql")
        repo.write("lib.py", LIB)
        repo.write("other.py", OTHER)
        repo.write("use.py", USE_V1)
        repo.write("test_use.py", TEST_USE)
        sha = repo.commit("first", C1)
        name = f"gql-{unique}"
        indexer.index(Git(repo.path), name, "main", sha)
        key = symbol_key(ontology, name, "lib.py", "Store.get")
        body = api.gql(IMPACT, api.key("read", name), {"id": key}).json()
        assert "errors" not in body, body
        impact = body["data"]["impact"]
        assert impact["tests"] == []
        assert impact["unresolved"]["names"] == ["get"]
        assert impact["unresolved"]["count"] == 2
        assert {"path": "use.py", "caller": "read", "callee": "s.get", "line": 5} in impact[
            "unresolved"
        ]["sample"]
        other = api.gql(IMPACT, api.key("read", f"other-{unique}"), {"id": key}).json()
        assert other["data"]["impact"]["unresolved"] is None


GUESSES = """
query($id: ID!, $guesses: Boolean!) {
  impact(symbol: $id, includeGuesses: $guesses) {
    callers { qualifiedName resolution }
    tests { qualifiedName }
  }
}
"""


class TestGuessesOverGraphQL:
    """impact leaves name-only guesses out unless `includeGuesses: true`."""

    def test_include_guesses(
        self, tmp_path: Path, api: Api, indexer: CodeIndexer, ontology: Ontology, unique: str
    ) -> None:
        name = index_files(tmp_path, indexer, f"gql-guesses-{unique}", GUESS_FILES)
        key = symbol_key(ontology, name, "guess.py", "Widget.frobnicate")
        token = api.key("read", name)
        plain = api.gql(GUESSES, token, {"id": key, "guesses": False}).json()
        assert "errors" not in plain, plain
        assert plain["data"]["impact"] == {"callers": [], "tests": []}
        asked = api.gql(GUESSES, token, {"id": key, "guesses": True}).json()["data"]["impact"]
        assert [c["resolution"] for c in asked["callers"]] == ["name_only", "import"]
        assert [t["qualifiedName"] for t in asked["tests"]] == ["test_guess.test_poke"]

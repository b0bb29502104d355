"""The lines every API answer shows move with the file at their moment (ontology v4):
GraphQL symbol, callers, history and search, before and after a line inserted above."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from strata.code.indexer import CodeIndexer
from strata.graph.gateway import Gateway
from strata.ontology import Ontology
from strata.search.docs import SearchIndex, local_embed
from strata.search.service import SearchService
from tests.integration.api.conftest import Api, api, make_api
from tests.integration.code.test_positions import C1, C2, C3, History, at, key

__all__ = ["api", "make_api"]  # the API fixtures, shared with tests/integration/api

READ = """
query($id: ID!, $at: AsOfInput) {
  symbol(id: $id, asOf: $at) { lineStart lineEnd unresolvedCalls evidence { lineStart lineEnd } }
  callees(symbol: $id, asOf: $at) { line lines evidence { lineStart } }
  history(id: $id) { validAt evidence { lineStart } content }
}
"""


def as_of(when: datetime) -> dict[str, str]:
    return {"validAt": at(when).valid_at.isoformat(), "knownAt": at(when).known_at.isoformat()}


class TestGraphQLLines:
    """symbol, callees and history over GraphQL answer each moment's lines."""

    def test_before_and_after_the_insertion(
        self, tmp_path: Path, api: Api, indexer: CodeIndexer, ontology: Ontology, unique: str
    ) -> None:
        history = History(tmp_path, f"posapi-{unique}")
        for step in (0, 1, 2):
            history.index(indexer, step)
        run = key(ontology, history.name, "big.py", "Runner.run")
        token = api.key("read", history.name)
        answers: list[dict[str, Any]] = []
        for step, when in enumerate((C1, C2, C3)):
            body = api.gql(READ, token, {"id": run, "at": as_of(when)}).json()
            assert "errors" not in body, body
            answers.append(body["data"])
            symbol = body["data"]["symbol"]
            start = history.line(step, "def run(")
            assert (symbol["lineStart"], symbol["evidence"]["lineStart"]) == (start, start)
            called = "return step15(x)" if step < 2 else "return step14(x) * 2"
            assert symbol["lineEnd"] == history.line(step, called)
            assert (
                f"mystery_call@{history.line(step, 'mystery_call(x)')}"
                in (symbol["unresolvedCalls"])
            )
            assert [(c["line"], c["lines"]) for c in body["data"]["callees"]] == [
                (history.line(step, called), [history.line(step, called)])
            ]
        versions = answers[-1]["history"]
        assert [v["evidence"]["lineStart"] for v in versions] == [
            history.line(1, "def run("),
            history.line(2, "def run("),
        ]
        assert [v["content"]["line_start"] for v in versions] == [
            history.line(1, "def run("),
            history.line(2, "def run("),
        ]


class TestSearchLines:
    """Search hits cite the span the symbol had at the search's moment."""

    def test_hits_before_and_after(
        self, tmp_path: Path, gateway: Gateway, indexer: CodeIndexer, unique: str
    ) -> None:
        history = History(tmp_path, f"possearch-{unique}")
        for step in (0, 1):
            history.index(indexer, step)
        embed = local_embed()
        index = SearchIndex(gateway, embed)
        index.sync(history.name)
        service = SearchService(gateway, index, embed_per_search=1000)
        for step, when in enumerate((C1, C2)):
            found = service.search("again", history.name, first=3, as_of=at(when))
            hit = next(h for h in found.hits if h.name == "again")
            assert hit.evidence.line_start == history.line(step, "def again(")
            assert hit.evidence.line_end == history.line(step, "return self.run(x)")

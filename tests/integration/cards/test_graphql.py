"""card and cards through the real API: as of a moment, staleness, and access control."""

from __future__ import annotations

from strata.cards import CardService
from strata.cards.pipeline import CardPipeline
from strata.code.indexer import CodeIndexer
from strata.git import Git
from tests.integration.api.conftest import Api, api, make_api
from tests.integration.cards.conftest import ALPHA_CORE, C1, C2, Indexed
from tests.integration.cards.model import scripted_model, writer

__all__ = ["api", "make_api"]  # the API fixtures, shared with tests/integration/api

CARD = """
query($repo: String!, $package: String!, $asOf: AsOfInput) {
  card(repository: $repo, package: $package, asOf: $asOf) {
    name package commit fingerprint markdown claims { kind object detail }
  }
}
"""

CARDS = """
query($repo: String!, $stale: Boolean) {
  cards(repository: $repo, stale: $stale) { name stale changedSources }
}
"""


def test_card_and_cards(
    indexed: Indexed, service: CardService, indexer: CodeIndexer, api: Api
) -> None:
    first = {c.name: c for c in service.build(indexed.repo)}
    token = api.key("read", indexed.repo)
    body = api.gql(CARD, token, {"repo": indexed.repo, "package": "alpha"}).json()
    assert "errors" not in body, body
    card = body["data"]["card"]
    assert card["markdown"] == first["alpha"].markdown
    assert {"kind": "called_by", "object": "beta", "detail": "imports 1, calls 1"} in card["claims"]
    indexed.git.write("alpha/alpha/core.py", ALPHA_CORE.replace("x * 2", "x + x"))
    sha = indexed.git.commit("alpha body", C2)
    indexer.index(Git(indexed.git.path), indexed.repo, "main", sha)
    service.build(indexed.repo, packages={"alpha"})
    then = {"validAt": C1.replace(day=15).isoformat()}
    old = api.gql(CARD, token, {"repo": indexed.repo, "package": "alpha", "asOf": then}).json()
    assert old["data"]["card"]["commit"] == indexed.shas[0]
    now = api.gql(CARD, token, {"repo": indexed.repo, "package": "alpha"}).json()
    assert now["data"]["card"]["commit"] == sha
    listed = api.gql(CARDS, token, {"repo": indexed.repo}).json()["data"]["cards"]
    assert [(c["name"], c["stale"]) for c in listed] == [("alpha", False), ("beta", False)]
    # another push changes beta only: only beta's card is stale
    indexed.git.write(
        "beta/beta/service.py",
        "import click\n\nfrom alpha.core import helper\n\n\n"
        "def serve(n):\n    return helper(n) + helper(1) + 1\n",
    )
    sha3 = indexed.git.commit("beta body", C2.replace(day=20))
    indexer.index(Git(indexed.git.path), indexed.repo, "main", sha3)
    stale = api.gql(CARDS, token, {"repo": indexed.repo, "stale": True}).json()["data"]["cards"]
    assert [c["name"] for c in stale] == ["beta"]
    assert "file:beta/beta/service.py" in stale[0]["changedSources"]
    outsider = api.key("read", f"other-{indexed.repo}")
    denied = api.gql(CARD, outsider, {"repo": indexed.repo, "package": "alpha"}).json()
    assert denied["data"]["card"] is None
    assert api.gql(CARDS, outsider, {"repo": indexed.repo}).json()["data"]["cards"] == []


REVIEW = """
query($repo: String!, $needsReview: Boolean) {
  cards(repository: $repo, needsReview: $needsReview) {
    name status reviewReasons draft drafts tokens markdown
  }
}
"""


def test_review_queue(indexed: Indexed, service: CardService, api: Api) -> None:
    """A card whose prose invented a dependency is in cards(needsReview: true), not published."""
    service.build(indexed.repo)
    with scripted_model() as (server, script):
        script.drafts("`beta` depends on `gamma`.")
        CardPipeline(service, prose=writer(server.base_url)).run(indexed.repo, packages={"beta"})
    token = api.key("read", indexed.repo)
    body = api.gql(REVIEW, token, {"repo": indexed.repo, "needsReview": True}).json()
    assert "errors" not in body, body
    [queued] = body["data"]["cards"]
    assert (queued["name"], queued["status"], queued["drafts"]) == ("beta", "needs_review", 3)
    assert any("'gamma'" in reason for reason in queued["reviewReasons"])
    assert "`gamma`" in queued["draft"]
    assert "gamma" not in queued["markdown"]
    assert queued["tokens"] > 0
    rest = api.gql(REVIEW, token, {"repo": indexed.repo, "needsReview": False}).json()
    assert [(c["name"], c["status"]) for c in rest["data"]["cards"]] == [("alpha", None)]

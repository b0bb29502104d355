"""A reviewer's decision on the review queue (core, CLI, GraphQL): a new version of the card,
the queued one kept in transaction time; the exact gate still refuses an invented claim."""

from __future__ import annotations

from datetime import timedelta

import pytest

from strata.cards import CardService, check_card
from strata.cards.pipeline import CardPipeline
from strata.cards.prose import HEADING
from strata.cards.review import decide
from strata.errors import ValidationError
from strata.settings import Settings
from strata.temporal import AsOf, now
from tests.integration.api.conftest import Api, api, make_api
from tests.integration.cards.conftest import Indexed
from tests.integration.cards.model import scripted_model, writer
from tests.integration.code.cli import cli

__all__ = ["api", "make_api"]

TRUE = (
    "`beta` depends on `alpha` and calls `helper` to double numbers. "
    "Its command `beta/beta/service.py:main` runs the service."
)
INVENTED = "`beta` depends on `alpha` and depends on `gamma` for storage."


def queue_beta(service: CardService, indexed: Indexed, draft: str) -> None:
    """beta's card in needs_review: ``draft`` judged unsupported (TRUE) or refused by the
    gate (INVENTED) on every one of its three drafts."""
    service.build(indexed.repo)
    with scripted_model() as (server, script):
        script.drafts(draft)
        script.judge(True, False)  # 50% supported: below the default 75%
        CardPipeline(service, prose=writer(server.base_url)).run(indexed.repo, packages={"beta"})
    [card] = service.cards(indexed.repo, package="beta")
    assert card.status == "needs_review"


class TestDecide:
    """approve publishes the draft, reject keeps the card without it: each a new version."""

    def test_approve_publishes_the_judged_draft(
        self, indexed: Indexed, service: CardService
    ) -> None:
        queue_beta(service, indexed, TRUE)
        before = now()
        card = decide(service, indexed.repo, "beta", "approved", by="ana", note="reads fine")
        assert card.status == "approved"
        [stored] = service.cards(indexed.repo, package="beta")
        assert stored.status == "approved"
        assert stored.review is not None
        assert (stored.review.reviewed_by, stored.review.note) == ("ana", "reads fine")
        assert stored.review.reviewed_at is not None
        assert stored.review.reviewed_at >= before
        assert f"{HEADING}\n\n{TRUE}" in stored.markdown
        assert "reviewed_by: ana" in stored.markdown
        assert check_card(stored, service.snapshot(indexed.repo)).ok
        assert service.needs_review(indexed.repo) == []
        # what Strata believed before the decision: the queued card, nothing overwritten
        earlier = AsOf.at(known_at=before - timedelta(milliseconds=1))
        [then] = service.cards(indexed.repo, as_of=earlier, package="beta")
        assert then.status == "needs_review"
        assert HEADING not in then.markdown
        assert then.commit == stored.commit

    def test_an_invented_dependency_cannot_be_approved(
        self, indexed: Indexed, service: CardService
    ) -> None:
        queue_beta(service, indexed, INVENTED)
        with pytest.raises(ValidationError, match="gamma") as caught:
            decide(service, indexed.repo, "beta", "approved", by="ana")
        assert "not a reviewer's to waive" in str(caught.value)
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "needs_review"  # nothing written
        assert "gamma" not in card.markdown

    def test_reject_keeps_the_card_and_no_redraft_follows(
        self, indexed: Indexed, service: CardService
    ) -> None:
        queue_beta(service, indexed, INVENTED)
        [queued] = service.cards(indexed.repo, package="beta")
        card = decide(service, indexed.repo, "beta", "rejected", by="bo", note="invented gamma")
        assert card.status == "rejected"
        assert card.markdown == queued.markdown
        assert service.needs_review(indexed.repo) == []
        with scripted_model() as (server, script):
            script.drafts(TRUE)
            result = CardPipeline(service, prose=writer(server.base_url)).run(
                indexed.repo, packages={"beta"}
            )
        assert result.rebuilt == []  # a decided card waits for a change of its sources
        assert script.asked("Overview") == []

    def test_only_a_queued_card_takes_a_decision(
        self, indexed: Indexed, service: CardService
    ) -> None:
        service.build(indexed.repo)
        with pytest.raises(ValidationError, match="not waiting for review"):
            decide(service, indexed.repo, "alpha", "approved", by="ana")
        with pytest.raises(ValidationError, match="who decides"):
            decide(service, indexed.repo, "alpha", "rejected", by=" ")
        with pytest.raises(ValidationError, match="approved or rejected"):
            decide(service, indexed.repo, "alpha", "maybe", by="ana")  # type: ignore[arg-type]


def test_cli_reject_and_approve(indexed: Indexed, service: CardService, settings: Settings) -> None:
    queue_beta(service, indexed, INVENTED)
    refused = cli(settings, "cards", "approve", "beta", "--repo", indexed.repo, "--by", "ana")
    assert refused.returncode != 0
    assert "gamma" in refused.stdout + refused.stderr
    done = cli(settings, "cards", "reject", "beta", "--repo", indexed.repo, "--note", "no gamma")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rejected by cli:" in done.stdout
    again = cli(settings, "cards", "reject", "beta", "--repo", indexed.repo)
    assert again.returncode != 0
    assert "not waiting for review" in again.stdout + again.stderr


DECIDE = """
mutation($repo: String!, $package: String!, $note: String!) {
  %s(repository: $repo, package: $package, note: $note) {
    name status reviewedBy reviewNote markdown
  }
}
"""


def test_graphql_mutations_are_scope_checked(
    indexed: Indexed, service: CardService, api: Api
) -> None:
    queue_beta(service, indexed, TRUE)
    variables = {"repo": indexed.repo, "package": "beta", "note": "ok"}
    reader = api.gql(DECIDE % "approveCard", api.key("read", indexed.repo), variables).json()
    assert reader["data"] is None
    assert reader["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert service.cards(indexed.repo, package="beta")[0].status == "needs_review"
    other = api.gql(DECIDE % "approveCard", api.key("write", f"x-{indexed.repo}"), variables)
    assert other.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    body = api.gql(DECIDE % "approveCard", api.key("write", indexed.repo), variables).json()
    assert "errors" not in body, body
    approved = body["data"]["approveCard"]
    assert (approved["status"], approved["reviewNote"]) == ("approved", "ok")
    assert approved["reviewedBy"].startswith("key:")
    assert TRUE in approved["markdown"]
    twice = api.gql(DECIDE % "rejectCard", api.key("write", indexed.repo), variables).json()
    assert twice["errors"][0]["extensions"]["code"] == "VALIDATION_ERROR"

"""Model prose under the exact gate, against a real OpenAI-compatible endpoint and Neo4j:
published when it passes, redrafted at most twice, then needs_review; faults have states."""

from __future__ import annotations

import socket

import pytest

from strata.cards import CardService, check_card
from strata.cards.pipeline import CardPipeline
from strata.cards.prose import HEADING
from tests.integration.cards.conftest import Indexed
from tests.integration.cards.model import scripted_model, writer

TRUE = (
    "`beta` depends on `alpha` and calls `helper` to double numbers. "
    "Its command `beta/beta/service.py:main` runs the service."
)
INVENTED = "`beta` depends on `alpha` and depends on `gamma` for storage."


def run_beta(service: CardService, indexed: Indexed, base_url: str, **overrides: object):  # type: ignore[no-untyped-def]
    pipeline = CardPipeline(service, prose=writer(base_url, **overrides))
    return pipeline.run(indexed.repo, packages={"beta"}), pipeline


class TestGate:
    """Structural claims in the prose are checked against the graph at the card's commit."""

    def test_a_true_draft_is_published_with_its_tokens(
        self, indexed: Indexed, service: CardService
    ) -> None:
        with scripted_model() as (server, script):
            script.drafts(TRUE)
            result, _ = run_beta(service, indexed, server.base_url)
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "published"
        assert f"{HEADING}\n\n{TRUE}" in card.markdown
        assert check_card(card, service.snapshot(indexed.repo)).ok
        assert card.review is not None
        assert card.review.drafts == 1
        assert card.review.tokens > 0
        assert card.review.cost == pytest.approx(card.review.tokens * 0.5 / 1000)
        assert [len(script.asked("Overview")), len(script.asked("Judgement"))] == [1, 1]
        assert result.summary()["published_prose"] == ["beta"]
        assert result.summary()["tokens"] == card.review.tokens

    def test_an_invented_dependency_is_redrafted_twice_then_queued(
        self, indexed: Indexed, service: CardService
    ) -> None:
        with scripted_model() as (server, script):
            script.drafts(INVENTED)
            result, _ = run_beta(service, indexed, server.base_url)
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "needs_review"
        assert HEADING not in card.markdown  # never published: the card goes out without it
        assert check_card(card, service.snapshot(indexed.repo)).ok
        assert card.review is not None
        assert card.review.drafts == 3
        assert "gamma" in card.review.draft
        assert any("'gamma'" in r and "no such package" in r for r in card.review.reasons)
        drafts = script.asked("Overview")
        assert len(drafts) == 3
        assert script.asked("Judgement") == []
        assert "refused" not in drafts[0]
        assert "'gamma'" in drafts[1]
        assert "'gamma'" in drafts[2]
        assert [c.name for c in service.needs_review(indexed.repo)] == ["beta"]
        assert result.summary()["needs_review"] == ["beta"]

    def test_a_redraft_that_passes_is_published(
        self, indexed: Indexed, service: CardService
    ) -> None:
        with scripted_model() as (server, script):
            script.drafts(INVENTED, TRUE)
            run_beta(service, indexed, server.base_url)
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "published"
        assert card.review is not None
        assert card.review.drafts == 2
        assert TRUE in card.markdown

    def test_the_judge_refuses_unsupported_free_text(
        self, indexed: Indexed, service: CardService
    ) -> None:
        with scripted_model() as (server, script):
            script.drafts(TRUE)
            script.judge(True, False)  # 50% < the default 75%
            run_beta(service, indexed, server.base_url)
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "needs_review"
        assert card.review is not None
        assert "50%" in card.review.reasons[0]
        assert "75%" in card.review.reasons[0]
        assert len(script.asked("Judgement")) == 3

    def test_a_draft_that_names_nothing_is_refused(
        self, indexed: Indexed, service: CardService
    ) -> None:
        with scripted_model() as (server, script):
            script.drafts("2 to 5 sentences about the package")  # what a tiny model echoed
            run_beta(service, indexed, server.base_url)
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "needs_review"
        assert card.review is not None
        assert "names nothing from the card" in card.review.reasons[0]
        assert script.asked("Judgement") == []

    def test_the_threshold_is_configurable(self, indexed: Indexed, service: CardService) -> None:
        with scripted_model() as (server, script):
            script.drafts(TRUE)
            script.judge(True, False)
            run_beta(service, indexed, server.base_url, cards_min_supported=0.5)
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "published"


class TestFaults:
    """A model fault gives a defined state; nothing that failed the gate is published."""

    def test_invalid_json_counts_as_a_failed_draft(
        self, indexed: Indexed, service: CardService
    ) -> None:
        with scripted_model() as (server, script):
            script.drafts(TRUE)
            server.mode = "invalid"
            run_beta(service, indexed, server.base_url)
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "needs_review"
        assert card.review is not None
        assert "not the JSON asked for" in card.review.reasons[0]
        assert HEADING not in card.markdown

    def test_a_timeout_fails_the_prose_and_the_next_run_retries(
        self, indexed: Indexed, service: CardService
    ) -> None:
        with scripted_model() as (server, script):
            script.drafts(TRUE)
            server.mode, server.delay_s = "slow", 3.0
            pipeline = CardPipeline(service, prose=writer(server.base_url, llm_timeout_s=0.5))
            first = pipeline.run(indexed.repo)
            cards = {c.name: c for c in service.cards(indexed.repo)}
            assert {n: c.status for n, c in cards.items()} == {
                "alpha": "prose_failed",
                "beta": "prose_failed",
            }
            reasons = [c.review.reasons[0] for c in cards.values() if c.review is not None]
            # the first card waited for the model once; the rest of the run did not
            assert sorted(r.split(":")[0] for r in reasons) == ["llm_timeout", "skipped"]
            assert len(script.asked("Overview")) <= 1
            assert first.summary()["prose_failed"]
            server.mode = "scripted"
            again = CardPipeline(service, prose=writer(server.base_url)).run(
                indexed.repo, packages={"beta"}
            )
        assert again.summary()["rebuilt"] == ["beta"]
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "published"

    def test_an_endpoint_that_is_down(self, indexed: Indexed, service: CardService) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]  # closed once the block ends: nothing listens
        run_beta(service, indexed, f"http://127.0.0.1:{port}/v1")
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "prose_failed"
        assert card.review is not None
        assert card.review.reasons[0].startswith("llm_unavailable")
        assert HEADING not in card.markdown

    def test_an_endpoint_answering_503(self, indexed: Indexed, service: CardService) -> None:
        with scripted_model() as (server, _):
            server.mode = "unavailable"
            run_beta(service, indexed, server.base_url)
        [card] = service.cards(indexed.repo, package="beta")
        assert card.status == "prose_failed"


class TestResume:
    """A run killed after some cards continues from the last stored card, not from zero."""

    def test_a_killed_run_resumes(self, indexed: Indexed, service: CardService) -> None:
        class Killed(Exception):
            pass

        def kill(done: int, total: int, card: object) -> None:
            raise Killed  # right after the first card was stored

        with scripted_model() as (server, script):
            script.drafts("It keeps its code in `alpha`.")
            script.drafts_for("beta", TRUE)
            with pytest.raises(Killed):
                CardPipeline(service, prose=writer(server.base_url), progress=kill).run(
                    indexed.repo
                )
            assert [c.name for c in service.cards(indexed.repo)] == ["alpha"]
            resumed = CardPipeline(service, prose=writer(server.base_url)).run(indexed.repo)
        assert resumed.summary()["rebuilt"] == ["beta"]
        assert resumed.fresh == 1
        assert len(script.asked("Overview")) == 2  # alpha was not drafted again

"""End to end with the real worker, Redis and Neo4j and a real OpenAI-compatible endpoint:
a push whose prose invents a dependency ends in needs_review, never in the published card."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from strata.cards import CardService
from strata.cards.prose import HEADING
from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.jobstore import JobStore
from strata.registry import RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.cards.conftest import C1, two_packages
from tests.integration.cards.model import CardScript, model_settings, scripted_model
from tests.integration.cards.test_worker import push, running_worker, wait_cards
from tests.integration.knowledge_docs.fake_openai import FakeOpenAI


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[FakeOpenAI, CardScript]]:
    with scripted_model() as pair:
        yield pair


@pytest.fixture(scope="module")
def prose_worker(
    model: tuple[FakeOpenAI, CardScript], redis_server: RedisServer, gateway: Gateway
) -> Iterator[tuple[Any, Settings]]:
    settings = model_settings(model[0].base_url)
    with running_worker(settings) as app:
        yield app, settings


def test_an_invented_dependency_is_refused_by_the_worker(
    prose_worker: tuple[Any, Settings],
    model: tuple[FakeOpenAI, CardScript],
    gateway: Gateway,
    service: CardService,
    tmp_path: Path,
    unique: str,
) -> None:
    app, settings = prose_worker
    _, script = model
    script.drafts("`alpha` keeps `Store` and doubles numbers with `helper`.")
    script.drafts_for("beta", "`beta` depends on `alpha` and on `gamma`, its cache.")
    name = f"cardsp-{unique}"
    repo = two_packages(GitRepo(tmp_path / "p"))
    sha = repo.commit("first", C1)
    RepoRegistry(gateway, ServerKeys(settings.secret_key.get_secret_value())).register(
        name=name, provider="github", secret="s" * 32, path=str(repo.path)
    )
    jobs = JobStore(redis.Redis.from_url(settings.redis_url))
    push(app, settings, jobs, name, sha)
    done = wait_cards(jobs, name, sha)
    assert done.result["rebuilt"] == ["alpha", "beta"]
    assert done.result["published_prose"] == ["alpha"]
    assert done.result["needs_review"] == ["beta"]
    assert done.result["tokens"] > 0
    assert done.result["cost"] > 0
    assert {"run", "snapshot", "card", "compile", "draft", "gate", "judge", "store"} <= set(
        done.result["steps"]
    )
    assert done.result["steps"]["draft"]["count"] == 1 + 3  # alpha once, beta 1 + 2 redrafts
    cards = {c.name: c for c in service.cards(name)}
    assert HEADING in cards["alpha"].markdown
    assert "gamma" not in cards["beta"].markdown
    assert cards["beta"].review is not None
    assert "gamma" in cards["beta"].review.draft
    assert [c.name for c in service.needs_review(name)] == ["beta"]

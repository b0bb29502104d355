"""What every model client of graphiti shares: bounded schemas, a timeout, checks, metering.

:class:`StructuredLLMClient` subclasses graphiti's ``LLMClient`` and owns:

- the JSON schema graphiti asks for is bounded (``maxItems``/``maxLength``), so a
  small model cannot loop until ``max_tokens`` and truncate its JSON;
- one call gets ``STRATA_LLM_TIMEOUT_S``, measured from when the model is free
  (a local model serves one call at a time; waiting in line is not the call's fault);
- the answer must be a JSON object that validates against graphiti's response
  model, or the call fails with :class:`LLMInvalidOutput` and the model's first
  characters, never a bare ``JSONDecodeError`` (graphiti would retry that for
  minutes with backoff);
- token use is added to the :class:`TokenUsage` of the current ingest
  (:func:`metered`), and the first failure is remembered there: graphiti
  swallows some failed calls (edge dating), so the ingest checks the record
  before anything is written (see ``strata.knowledge.documents``).

The backends: :mod:`strata.knowledge.local_llm` and :mod:`strata.knowledge.openai_compat`.
"""

from __future__ import annotations

import asyncio
import json
import re
from abc import abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar

import pydantic
from graphiti_core.llm_client import LLMClient, LLMConfig
from graphiti_core.llm_client.config import DEFAULT_MAX_TOKENS, ModelSize
from graphiti_core.prompts.models import Message

from strata.errors import StrataError

# Bounds added to every schema a model must fill (graphiti's own models have none).
MAX_ITEMS = 12
MAX_STRING = 400


class LLMError(StrataError):
    """A model call failed; the document was not written."""

    code = "llm_error"


class LLMUnavailable(LLMError):
    """The model endpoint could not be reached or refused to serve; worth retrying."""

    code = "llm_unavailable"
    http_status = 503
    retryable = True


class LLMTimeout(LLMError):
    """A model call took longer than STRATA_LLM_TIMEOUT_S; worth retrying."""

    code = "llm_timeout"
    http_status = 504
    retryable = True


class LLMInvalidOutput(LLMError):
    """The model answered with something that is not the JSON object asked for."""

    code = "llm_invalid_output"


# -- token use of one ingest -----------------------------------------------------------


@dataclass(slots=True)
class TokenUsage:
    """Model calls and tokens of one ingest, and its first failed call (if any)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failure: LLMError | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }


_usage: ContextVar[TokenUsage | None] = ContextVar("strata_llm_usage", default=None)


@contextmanager
def metered() -> Iterator[TokenUsage]:
    """Count every model call made in this context (and the tasks it starts)."""
    usage = TokenUsage()
    token = _usage.set(usage)
    try:
        yield usage
    finally:
        _usage.reset(token)


def current_usage() -> TokenUsage | None:
    return _usage.get()


def replay(failure: LLMError) -> LLMError:
    """A fresh exception of the same kind (one instance must not be raised twice)."""
    return type(failure)(failure.message, hint=failure.hint, **failure.details)


# -- structured output -----------------------------------------------------------------


def bounded_schema(
    schema: Mapping[str, Any], *, max_items: int = MAX_ITEMS, max_length: int = MAX_STRING
) -> dict[str, Any]:
    """A copy of a JSON schema with every array and string bounded."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, Mapping):
            return node
        out = {key: walk(value) for key, value in node.items()}
        kinds = out.get("type")
        kinds = set(kinds) if isinstance(kinds, list) else {kinds}
        if "array" in kinds:
            out["maxItems"] = min(int(out.get("maxItems", max_items)), max_items)
        if "string" in kinds and "enum" not in out and "format" not in out:
            out["maxLength"] = min(int(out.get("maxLength", max_length)), max_length)
        return out

    result = walk(schema)
    assert isinstance(result, dict)
    return result


_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\r?\n?|\r?\n?```[ \t]*$")


def parse_structured(text: str, response_model: type[pydantic.BaseModel] | None) -> dict[str, Any]:
    """The model's answer as a dict, checked against graphiti's response model."""
    stripped = _FENCE.sub("", text.strip()).strip()
    sample = text[:200]
    if not stripped:
        raise LLMInvalidOutput("the model returned an empty answer", hint=_HINT)
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise LLMInvalidOutput(
            f"the model did not return valid JSON ({exc.msg} at character {exc.pos})",
            hint=_HINT,
            sample=sample,
        ) from None
    if not isinstance(data, dict):
        raise LLMInvalidOutput(
            f"the model returned JSON {type(data).__name__}, not an object", sample=sample
        )
    if response_model is not None:
        try:
            response_model.model_validate(data)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(object)"
            raise LLMInvalidOutput(
                f"the model's JSON does not fit {response_model.__name__}: "
                f"{where}: {first['msg']} ({exc.error_count()} problem(s))",
                hint=_HINT,
                sample=sample,
            ) from None
    return data


_HINT = "a larger model extracts more reliably: see docs/knowledge.md"


@dataclass(frozen=True, slots=True)
class Completion:
    """One answer of a model and what it cost."""

    text: str
    input_tokens: int
    output_tokens: int


class StructuredLLMClient(LLMClient):
    """graphiti's LLMClient with bounded schemas, a per-call timeout, checks and metering."""

    provider: ClassVar[str] = "strata"

    def __init__(
        self,
        config: LLMConfig,
        *,
        timeout_s: float,
        max_output_tokens: int,
        max_items: int = MAX_ITEMS,
        max_length: int = MAX_STRING,
    ) -> None:
        super().__init__(config, cache=False)
        self.timeout_s = timeout_s
        self.max_output_tokens = max_output_tokens
        self._max_items = max_items
        self._max_length = max_length

    @abstractmethod
    async def _complete(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None,
        name: str,
        max_tokens: int,
        model: str | None,
    ) -> Completion:
        """Ask the backend once; raise :class:`LLMError` (or a backend error) on failure."""

    async def _wait_turn(self) -> None:
        """Wait until the backend is free (no-op for backends that serve in parallel)."""

    def _release_turn(self) -> None:
        """Give the backend to the next call."""

    def _translate(self, exc: Exception) -> LLMError:
        """A backend exception as an LLMError (subclasses know their client's errors)."""
        if isinstance(exc, ConnectionError | OSError):
            return LLMUnavailable(f"the model endpoint is unreachable: {exc}")
        return LLMError(f"the model call failed: {type(exc).__name__}: {exc}")

    async def _generate_response(
        self,
        messages: list[Message],
        response_model: type[pydantic.BaseModel] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_size: ModelSize = ModelSize.medium,
        *,
        model: str | None = None,
    ) -> dict[str, Any]:
        usage = current_usage()
        if usage is not None and usage.failure is not None:
            # One failed call fails the document: spend nothing more on it.
            raise replay(usage.failure)
        schema = (
            bounded_schema(
                response_model.model_json_schema(),
                max_items=self._max_items,
                max_length=self._max_length,
            )
            if response_model is not None
            else None
        )
        name = response_model.__name__ if response_model is not None else "response"
        try:
            completion = await self._timed(messages, schema, name, max_tokens, model)
            if usage is not None:
                usage.calls += 1
                usage.input_tokens += completion.input_tokens
                usage.output_tokens += completion.output_tokens
            self.token_tracker.record(name, completion.input_tokens, completion.output_tokens)
            return parse_structured(completion.text, response_model)
        except LLMError as exc:
            if usage is not None and usage.failure is None:
                usage.failure = exc
            raise

    async def _timed(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None,
        name: str,
        max_tokens: int,
        model: str | None,
    ) -> Completion:
        await self._wait_turn()
        try:
            async with asyncio.timeout(self.timeout_s):
                return await self._complete(
                    messages, schema, name, min(max_tokens, self.max_output_tokens), model
                )
        except TimeoutError:
            raise LLMTimeout(
                f"the model did not answer within {self.timeout_s:g} s ({name})",
                hint="raise STRATA_LLM_TIMEOUT_S, or use a faster model or endpoint",
            ) from None
        except LLMError:
            raise
        except Exception as exc:
            raise self._translate(exc) from exc
        finally:
            self._release_turn()

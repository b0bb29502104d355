"""A tiny OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1, for tests.

``mode`` decides every answer: ``scripted`` (the :class:`ScriptedLLMClient`'s
canned JSON for the response model named in ``response_format``), ``invalid``
(prose instead of JSON), ``slow`` (answers after ``delay_s``), ``unavailable``
(HTTP 503). The real :class:`OpenAICompatibleClient` talks to it over HTTP.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.integration.knowledge_docs.scripted import Scenario, ScriptedLLMClient


class FakeOpenAI(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, scenarios: list[Scenario]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = "scripted"
        self.delay_s = 3.0
        self.script = ScriptedLLMClient(scenarios)
        self.requests: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        mode = self.server.mode
        if mode == "unavailable":
            self._send(503, {"error": {"message": "model is loading", "type": "server_error"}})
            return
        if mode == "slow":
            time.sleep(self.server.delay_s)
        fmt = body.get("response_format") or {}
        name = (fmt.get("json_schema") or {}).get("name", "response")
        prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
        content = (
            "I think the entities are Celery and Redis."
            if mode == "invalid"
            else json.dumps(self.server.script.answer(name, prompt))
        )
        self._send(
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "scripted"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt) // 4,
                    "completion_tokens": len(content) // 4,
                    "total_tokens": len(prompt) // 4 + len(content) // 4,
                },
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            pass


@contextmanager
def fake_openai(scenarios: list[Scenario]) -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(scenarios)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()

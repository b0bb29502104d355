"""Card run steps: summed always, exported as OTLP/HTTP spans only when an endpoint is set."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from strata.cards.spans import Steps, flush, tracer_for
from tests.conftest import make_settings


class Collector(BaseHTTPRequestHandler):
    """A tiny OTLP/HTTP receiver: keeps every exported request body."""

    bodies: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def collector() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    server.shutdown()
    server.server_close()


def run(steps: Steps) -> None:
    with steps.step("run", repository="r"):
        for attempt in (1, 2):
            with steps.step("draft", attempt=attempt) as step:
                step.spent(100, 0.05)
        with steps.step("store"):
            pass


class TestSteps:
    """Every step is timed and summed on the run, with or without tracing."""

    def test_off_without_an_endpoint(self) -> None:
        assert tracer_for(make_settings()) is None
        steps = Steps()
        run(steps)
        summary = steps.summary()
        assert summary["tokens"] == 200
        assert summary["cost"] == pytest.approx(0.1)
        assert summary["steps"]["draft"]["count"] == 2
        assert summary["steps"]["store"]["count"] == 1
        assert summary["seconds"] >= summary["steps"]["draft"]["seconds"]

    def test_exported_over_otlp(self, collector: str) -> None:
        settings = make_settings(otlp_endpoint=collector)
        tracer = tracer_for(settings)
        assert tracer is not None
        run(Steps(tracer))
        flush(settings)
        spans = [
            span
            for body in Collector.bodies
            for resource in ExportTraceServiceRequest.FromString(body).resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
        names = sorted(s.name for s in spans)
        assert names == ["cards.draft", "cards.draft", "cards.run", "cards.store"]
        drafts = [s for s in spans if s.name == "cards.draft"]
        tokens = {a.key: a.value for a in drafts[0].attributes}
        assert tokens["strata.tokens"].int_value == 100
        assert tokens["strata.cost"].double_value == pytest.approx(0.05)
        root = next(s for s in spans if s.name == "cards.run")
        assert all(s.parent_span_id == root.span_id for s in drafts)

"""Each step of a card run, timed and summed, and traced as an OpenTelemetry span when an
OTLP endpoint is configured (``STRATA_OTLP_ENDPOINT``); otherwise tracing is off and only
the sums (what the job records) are kept.

A span carries ``strata.seconds``, ``strata.tokens`` and ``strata.cost``; the run's
summary adds them up per step name, so the job shows where time and tokens went.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from strata.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

_providers: dict[str, TracerProvider] = {}
_lock = threading.Lock()


def tracer_for(settings: Settings) -> Tracer | None:
    """The cards tracer exporting to the settings' OTLP endpoint (None: tracing is off).

    One provider per endpoint and process, kept apart from the global provider so a
    library's own instrumentation never lands in our exporter by accident.
    """
    endpoint = settings.otlp_endpoint
    if not endpoint:
        return None
    with _lock:
        provider = _providers.get(endpoint)
        if provider is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            provider = TracerProvider(resource=Resource.create({"service.name": "strata"}))
            provider.add_span_processor(
                BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, timeout=10))
            )
            _providers[endpoint] = provider
    return provider.get_tracer("strata.cards")


def flush(settings: Settings, timeout_s: float = 10.0) -> None:
    """Send the spans still buffered for the settings' endpoint (end of a job)."""
    provider = _providers.get(settings.otlp_endpoint or "")
    if provider is not None:
        provider.force_flush(int(timeout_s * 1000))


@dataclass(slots=True)
class Step:
    """One running step: what it spent, filled in while it runs."""

    name: str
    tokens: int = 0
    cost: float = 0.0

    def spent(self, tokens: int, cost: float) -> None:
        self.tokens += tokens
        self.cost += cost


@dataclass(slots=True)
class _Totals:
    count: int = 0
    seconds: float = 0.0
    tokens: int = 0
    cost: float = 0.0


@dataclass(slots=True)
class Steps:
    """Times every step of a run (as spans when ``tracer`` is set) and sums them by name."""

    tracer: Tracer | None = None
    totals: dict[str, _Totals] = field(default_factory=dict)

    @contextmanager
    def step(self, name: str, **attributes: str | int | float) -> Iterator[Step]:
        """Time the block as step ``name``; tokens and cost go on the yielded :class:`Step`."""
        current = Step(name)
        started = time.perf_counter()
        if self.tracer is None:
            try:
                yield current
            finally:
                self._add(current, time.perf_counter() - started)
            return
        with self.tracer.start_as_current_span(f"cards.{name}", attributes=attributes) as span:
            try:
                yield current
            finally:
                seconds = time.perf_counter() - started
                span.set_attributes(
                    {
                        "strata.seconds": seconds,
                        "strata.tokens": current.tokens,
                        "strata.cost": current.cost,
                    }
                )
                self._add(current, seconds)

    def _add(self, step: Step, seconds: float) -> None:
        totals = self.totals.setdefault(step.name, _Totals())
        totals.count += 1
        totals.seconds += seconds
        totals.tokens += step.tokens
        totals.cost += step.cost

    def summary(self, root: str = "run") -> dict[str, Any]:
        """Seconds of the ``root`` step, tokens and cost of all steps, and each step's sums."""
        tokens = sum(t.tokens for t in self.totals.values())
        cost = sum(t.cost for t in self.totals.values())
        whole = self.totals.get(root)
        return {
            "seconds": round(whole.seconds if whole else 0.0, 3),
            "tokens": tokens,
            "cost": round(cost, 6),
            "steps": {
                name: {
                    "count": t.count,
                    "seconds": round(t.seconds, 3),
                    "tokens": t.tokens,
                    "cost": round(t.cost, 6),
                }
                for name, t in sorted(self.totals.items())
            },
        }

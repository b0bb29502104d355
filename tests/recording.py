"""What a piece of code asked Neo4j: the reads and writes it ran through any gateway."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from strata.graph.gateway import Gateway, Tx

Read = tuple[str, list[dict[str, Any]]]  # a statement's text and the rows it answered


def recorded_reads(monkeypatch: pytest.MonkeyPatch, act: Callable[[], object]) -> list[Read]:
    """Run ``act`` against the real database; the reads it ran, in order."""
    seen: list[Read] = []
    read = Gateway.read

    def recording(self: Gateway, text: str, **params: Any) -> list[dict[str, Any]]:
        rows = read(self, text, **params)
        seen.append((text, rows))
        return rows

    with monkeypatch.context() as patch:
        patch.setattr(Gateway, "read", recording)
        act()
    return seen


def recorded_writes(monkeypatch: pytest.MonkeyPatch, act: Callable[[], object]) -> list[str]:
    """Run ``act`` against the real database; the statements it ran in write
    transactions, in order."""
    seen: list[str] = []
    run = Tx.run

    def recording(self: Tx, text: str, **params: Any) -> list[dict[str, Any]]:
        seen.append(text)
        return run(self, text, **params)

    with monkeypatch.context() as patch:
        patch.setattr(Tx, "run", recording)
        act()
    return seen


def recorded_statements(
    monkeypatch: pytest.MonkeyPatch, act: Callable[[], object]
) -> tuple[list[Read], list[str]]:
    """Run ``act`` against the real database; the reads it ran and the statements it
    ran in write transactions, each in order."""
    writes: list[str] = []
    reads = recorded_reads(monkeypatch, lambda: writes.extend(recorded_writes(monkeypatch, act)))
    return reads, writes

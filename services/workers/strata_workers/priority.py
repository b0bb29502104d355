"""CPU priority of a worker: background queues yield the CPU to the code queue."""

from __future__ import annotations


def background_nice(consumed: set[str], background: set[str], nice: int) -> int:
    """How much a worker consuming ``consumed`` lowers its priority: ``nice`` when every
    queue it consumes is a background one, else 0 (the code queue is never lowered)."""
    return nice if consumed and consumed <= background else 0

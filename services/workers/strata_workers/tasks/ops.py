"""Operational tasks: ping, used by health checks and tests of the queue."""

from __future__ import annotations

import os
import socket
from typing import Any

from celery import shared_task

from strata.jobs import PING, PingJob, parse_job


@shared_task(name=PING, bind=True)
def ping(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Echo the payload with where it ran (queue, host, pid)."""
    parsed = parse_job(PingJob, job)
    delivery = getattr(self.request, "delivery_info", None) or {}
    return {
        "payload": parsed.payload,
        "queue": delivery.get("routing_key"),
        "host": socket.gethostname(),
        "pid": os.getpid(),
    }

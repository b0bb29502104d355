"""Closing the gateway waits for the sessions in flight, and always finishes (no
database: a stand-in driver whose sessions block and whose close can fail)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from strata.graph.gateway import Gateway


class _Driver:
    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.closed = 0

    @contextmanager
    def session(self, database: str) -> Iterator[object]:
        yield object()

    def close(self) -> None:
        self.closed += 1
        if self.error is not None:
            raise self.error


def test_a_driver_that_fails_to_say_goodbye_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # neo4j 6.4's pool raised this from a connection's GOODBYE at an API's shutdown
    driver = _Driver(BufferError("Existing exports of data: object cannot be re-sized"))
    gateway = Gateway(driver, database="neo4j", query_timeout_s=1.0)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="strata.graph.gateway"):
        gateway.close()
    assert driver.closed == 1
    assert "BufferError" in caplog.text


def test_a_clean_close_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    driver: Any = _Driver(None)
    with caplog.at_level(logging.WARNING, logger="strata.graph.gateway"):
        Gateway(driver, database="neo4j", query_timeout_s=1.0).close()
    assert driver.closed == 1
    assert caplog.text == ""


def _held_session(gateway: Gateway) -> tuple[threading.Event, threading.Thread]:
    """A thread inside a session until the returned event is set (a request's read
    still running after the request timed out)."""
    inside, release = threading.Event(), threading.Event()

    def read() -> None:
        with gateway._session():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=read)
    thread.start()
    assert inside.wait(5)
    return release, thread


def test_close_waits_for_a_session_in_flight() -> None:
    driver: Any = _Driver(None)
    gateway = Gateway(driver, database="neo4j", query_timeout_s=1.0)
    release, reader = _held_session(gateway)
    closer = threading.Thread(target=gateway.close, kwargs={"wait_s": 10.0})
    closer.start()
    closer.join(0.3)
    assert closer.is_alive()
    assert driver.closed == 0
    release.set()
    reader.join(5)
    closer.join(5)
    assert not closer.is_alive()
    assert driver.closed == 1


def test_close_gives_up_on_a_session_past_the_wait(caplog: pytest.LogCaptureFixture) -> None:
    driver: Any = _Driver(None)
    gateway = Gateway(driver, database="neo4j", query_timeout_s=1.0)
    release, reader = _held_session(gateway)
    try:
        with caplog.at_level(logging.WARNING, logger="strata.graph.gateway"):
            gateway.close(wait_s=0.1)
        assert driver.closed == 1
        assert "1 session(s) still open" in caplog.text
    finally:
        release.set()
        reader.join(5)

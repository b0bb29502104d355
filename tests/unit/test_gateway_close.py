"""Closing the gateway always finishes (no database: the driver's own failure on close)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from strata.graph.gateway import Gateway


class _Driver:
    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.closed = 0

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

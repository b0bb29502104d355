"""Structured logging (structlog): JSON lines with context variables."""

from __future__ import annotations

import logging
import sys

import structlog


def configure(*, level: str = "INFO", json: bool = True) -> None:
    """Configure structlog and the standard library once per process."""
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=level, stream=sys.stderr, format="%(message)s", force=True)
    logging.getLogger("neo4j").setLevel(logging.WARNING)


def get(name: str) -> structlog.stdlib.BoundLogger:
    """A logger bound to a component name."""
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(component=name)
    return logger

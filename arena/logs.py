"""structlog setup: readable console lines on a terminal, JSON lines otherwise."""

from __future__ import annotations

import logging
import sys

import structlog


def configure(level: int = logging.INFO) -> None:
    """Configure once at startup; modules only call `structlog.get_logger()`."""
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if sys.stderr.isatty():
        renderer: list[structlog.typing.Processor] = [structlog.dev.ConsoleRenderer()]
    else:
        renderer = [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    structlog.configure(
        processors=[*shared, *renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        # One write per line, its newline included: Python's stderr writes through, so `print`
        # (PrintLogger) made two, and the lines of processes sharing a stderr (a ladder and its
        # referee processes) ran together.
        logger_factory=structlog.WriteLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )

"""structlog configuration: console output locally, JSON lines with a flag or setting."""

from __future__ import annotations

import logging
import sys

import structlog


def _stderr_logger(*args: object) -> structlog.PrintLogger:
    """Resolve ``sys.stderr`` when a logger is made, not at configure time (it may be swapped)."""
    return structlog.PrintLogger(file=sys.stderr)


def configure_logging(*, json: bool = False, level: str = "info") -> None:
    """Configure structlog once per process; ids are bound per handler call by the dispatcher."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.typing.Processor
    if json:
        processors.append(structlog.processors.format_exc_info)
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )
    for noisy in ("httpx", "httpcore", "openai", "nats"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

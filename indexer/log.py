"""Structured daemon logs: JSON lines when stdout is not a terminal (journald), console on one."""

from __future__ import annotations

import logging
import sys

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def configure(level: str = "info", stream=None) -> None:
    stream = stream or sys.stdout
    processors = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
    ]
    if stream.isatty():
        processors.append(structlog.dev.ConsoleRenderer())
    else:
        processors.append(structlog.processors.JSONRenderer(ensure_ascii=False))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level.lower(), logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    # libraries log through stdlib logging; keep their chatter out of the journal
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    for noisy in ("watchdog",):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def get(name: str = "mdmem"):
    return structlog.get_logger(name)

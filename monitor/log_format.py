"""The one format of every log line the product's processes print: the
web (gunicorn, uvicorn's worker and Django), the poller and the tasks
process (django-q2 included), at work and at shutdown alike.

    2026-11-29 14:05:07,123 INFO polling: Stopping: finishing polls in flight.

settings.LOGGING and the web's gunicorn configuration
(monitor/gunicorn_config.py) use FORMAT; the lines a command says to its
operator go through as_log_line(), so they read like the rest.
"""

from __future__ import annotations

import logging

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_FORMATTER = logging.Formatter(FORMAT)


def as_log_line(name: str, message: str, level: int = logging.INFO) -> str:
    """The message as a line of the log, from the logger called `name`."""
    record = logging.LogRecord(name, level, __file__, 0, message, None, None)
    return _FORMATTER.format(record)


def gunicorn_logging(level: str = "INFO") -> dict:
    """gunicorn's own lines (the master's, and uvicorn's in each worker,
    which use gunicorn's handlers) and the access log, in FORMAT."""
    handler = {"class": "logging.StreamHandler", "formatter": "plain"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": FORMAT}},
        "handlers": {
            "console": {**handler, "stream": "ext://sys.stderr"},
            "access": {**handler, "stream": "ext://sys.stdout"},
        },
        "root": {"level": level, "handlers": ["console"]},
        "loggers": {
            "gunicorn.error": {
                "level": level,
                "handlers": ["console"],
                "propagate": False,
            },
            "gunicorn.access": {
                "level": "INFO",
                "handlers": ["access"],
                "propagate": False,
            },
        },
    }

"""Build the engine from Django settings, with the database at its edges."""

from __future__ import annotations

from django.conf import settings

from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from polling.store import DatabaseResultStore, DatabaseTargetSource


def config_from_settings(**overrides) -> PollerConfig:
    """The poller's knobs from settings; overrides that are None are ignored."""
    values = {
        "max_concurrent_http": settings.MAX_CONCURRENT_HTTP,
        "reload_interval": settings.POLLER_RELOAD_INTERVAL,
        "task_queue_size": settings.POLLER_TASK_QUEUE_SIZE,
        "result_queue_size": settings.POLLER_RESULT_QUEUE_SIZE,
        "recheck_seconds": settings.POLLER_RECHECK_SECONDS,
        "stop_timeout": settings.POLLER_STOP_TIMEOUT,
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return PollerConfig(**values)


def database_coordinator(config: PollerConfig) -> Coordinator:
    """A Coordinator that polls the enabled projects and saves to the
    database."""
    return Coordinator(
        config, source=DatabaseTargetSource(), store=DatabaseResultStore()
    )

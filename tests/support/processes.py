"""Environment for the real processes tests start (runpoller, qcluster)."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from django.db import connection

from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def database_url(*, host: str = "", port: int | None = None) -> str:
    """A DATABASE_URL naming the test database this test runs on; on
    PostgreSQL, `host` and `port` replace the server's (a proxy's)."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    user = settings["USER"]
    host = host or settings["HOST"]
    port = port or settings["PORT"] or 5432
    return f"postgres://{user}@{host}:{port}/{settings['NAME']}"


def process_env(**overrides: str) -> dict[str, str]:
    """The product's own settings on the test database, no .env file."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "monitor.settings",
        "ENV_FILE": "/nonexistent",
        "SECRET_KEY": "process-test-key",
        "DATABASE_URL": database_url(),
        **overrides,
    }


def sigterm_when(condition) -> threading.Thread:
    """Send this process SIGTERM once `condition()` holds (in a thread)."""
    thread = threading.Thread(
        target=lambda: (wait_until(condition), os.kill(os.getpid(), signal.SIGTERM))
    )
    thread.start()
    return thread

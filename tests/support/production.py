"""manage.py run as production runs it: DEBUG off, real settings from the
environment, no developer .env."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.processes import ROOT

PRODUCTION_ENV = {
    "ENV_FILE": "/nonexistent",  # a developer's .env must not leak in
    "DEBUG": "false",
    "SECRET_KEY": "x9Kq2vLr7TzP4mWn8bYc3HdF6gJs1aQe5uRt0oIyVkXlZpBjNhMwCvEfGiD",
    "ALLOWED_HOSTS": "status.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://status.example.com",
}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    clean_env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DEBUG", "SECRET_KEY", "HTTPS", "DJANGO_SETTINGS_MODULE"}
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean_env, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )

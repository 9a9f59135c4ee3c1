"""System checks for the background tasks' settings: bad values fail at
startup, not in the middle of the night."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error


def tasks_settings_check(app_configs, **kwargs) -> list[Error]:
    errors = []
    if settings.Q_WORKERS < 1:
        errors.append(Error("Q_WORKERS must be at least 1.", id="projects.E001"))
    if not 0 < settings.Q_TIMEOUT < settings.Q_RETRY:
        errors.append(
            Error(
                "Q_RETRY must be longer than Q_TIMEOUT, and both positive, or "
                "tasks still running are handed out a second time.",
                id="projects.E002",
            )
        )
    return errors

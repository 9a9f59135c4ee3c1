"""System checks for the background tasks' and housekeeping settings: bad
values fail at startup, not in the middle of the night."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error

# qcluster runs the checks of this tag (and the models'), not every check:
# the URLs' check would import every page and the admin into the tasks
# process.
TASKS_CHECKS = "tasks"


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


# The dashboard reads raw polls for its 24-hour views and hourly rollups for
# its 7- and 30-day charts, so those must outlive the ranges.
MIN_RETENTION_DAYS = {
    "RESULT_RETENTION_DAYS": 2,
    "HOURLY_RETENTION_DAYS": 31,
    "DAILY_RETENTION_DAYS": 1,
}


def retention_settings_check(app_configs, **kwargs) -> list[Error]:
    errors = []
    for number, (name, minimum) in enumerate(MIN_RETENTION_DAYS.items(), start=3):
        days = getattr(settings, name)
        if days != 0 and days < minimum:
            errors.append(
                Error(
                    f"{name} must be 0 (keep forever) or at least {minimum} days.",
                    id=f"projects.E00{number}",
                )
            )
    return errors


def daily_after_hourly_check(app_configs, **kwargs) -> list[Error]:
    hourly, daily = settings.HOURLY_RETENTION_DAYS, settings.DAILY_RETENTION_DAYS
    if daily > 0 and (not hourly or daily < hourly):
        return [
            Error(
                "DAILY_RETENTION_DAYS must be 0 (keep forever) or at least "
                "HOURLY_RETENTION_DAYS: the dashboard reads days the hourly "
                "rollups no longer hold from the daily ones.",
                id="projects.E006",
            )
        ]
    return []

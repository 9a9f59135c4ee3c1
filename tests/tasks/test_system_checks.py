from __future__ import annotations

import pytest

from projects.system_checks import (
    daily_after_hourly_check,
    retention_settings_check,
    tasks_settings_check,
)


def error_ids() -> list[str]:
    checks = (tasks_settings_check, retention_settings_check, daily_after_hourly_check)
    return [error.id for check in checks for error in check(None)]


def test_the_default_settings_pass():
    assert error_ids() == []


@pytest.mark.parametrize(
    ("overrides", "error_id"),
    [
        ({"Q_WORKERS": 0}, "projects.E001"),
        ({"Q_TIMEOUT": 600, "Q_RETRY": 600}, "projects.E002"),
        ({"Q_TIMEOUT": 0, "Q_RETRY": 60}, "projects.E002"),
        ({"RESULT_RETENTION_DAYS": 1}, "projects.E003"),
        ({"RESULT_RETENTION_DAYS": -1}, "projects.E003"),
        ({"HOURLY_RETENTION_DAYS": 30}, "projects.E004"),
        ({"DAILY_RETENTION_DAYS": -5, "HOURLY_RETENTION_DAYS": 0}, "projects.E005"),
        ({"DAILY_RETENTION_DAYS": 60, "HOURLY_RETENTION_DAYS": 90}, "projects.E006"),
        ({"DAILY_RETENTION_DAYS": 60, "HOURLY_RETENTION_DAYS": 0}, "projects.E006"),
    ],
)
def test_bad_values_are_errors(settings, overrides, error_id):
    for name, value in overrides.items():
        setattr(settings, name, value)
    assert error_ids() == [error_id]


def test_zero_keeps_everything_and_passes(settings):
    settings.RESULT_RETENTION_DAYS = 0
    settings.HOURLY_RETENTION_DAYS = 0
    settings.DAILY_RETENTION_DAYS = 0
    assert error_ids() == []

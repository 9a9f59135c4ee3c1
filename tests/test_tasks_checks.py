from __future__ import annotations

import pytest

from projects.checks import tasks_settings_check


def error_ids() -> list[str]:
    return [error.id for error in tasks_settings_check(None)]


def test_the_default_settings_pass():
    assert error_ids() == []


@pytest.mark.parametrize(
    ("overrides", "error_id"),
    [
        ({"Q_WORKERS": 0}, "projects.E001"),
        ({"Q_TIMEOUT": 600, "Q_RETRY": 600}, "projects.E002"),
        ({"Q_TIMEOUT": 0, "Q_RETRY": 60}, "projects.E002"),
    ],
)
def test_bad_values_are_errors(settings, overrides, error_id):
    for name, value in overrides.items():
        setattr(settings, name, value)
    assert error_ids() == [error_id]

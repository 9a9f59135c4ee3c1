from __future__ import annotations

import pytest

from polling.system_checks import parse_bind, poller_settings_check


def error_ids() -> list[str]:
    return [error.id for error in poller_settings_check(None)]


def test_the_default_settings_pass():
    assert error_ids() == []


@pytest.mark.parametrize(
    ("name", "value", "error_id"),
    [
        ("MAX_CONCURRENT_HTTP", 0, "polling.E001"),
        ("MAX_CONCURRENT_HTTP", 5001, "polling.E001"),
        ("MIN_POLL_INTERVAL", 0, "polling.E002"),
        ("POLLER_RELOAD_INTERVAL", 0, "polling.E003"),
        ("POLLER_TASK_QUEUE_SIZE", 0, "polling.E004"),
        ("POLLER_RESULT_QUEUE_SIZE", 0, "polling.E004"),
        ("POLLER_CONTROL_BIND", "8765", "polling.E005"),
        ("POLLER_CONTROL_BIND", "127.0.0.1:http", "polling.E005"),
        ("POLLER_CONTROL_BIND", "127.0.0.1:70000", "polling.E005"),
        ("POLLER_CONTROL_URL", "127.0.0.1:8765", "polling.E006"),
        ("POLLER_SYNC_RETRIES", -1, "polling.E011"),
        ("POLLER_SYNC_RETRIES", 11, "polling.E011"),
    ],
)
def test_bad_poller_settings_are_errors(settings, name, value, error_id):
    setattr(settings, name, value)
    assert error_ids() == [error_id]


@pytest.mark.parametrize(
    ("bind", "parsed"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("[::1]:8765", ("::1", 8765)),
        ("0.0.0.0:0", ("0.0.0.0", 0)),
    ],
)
def test_parse_bind(bind, parsed):
    assert parse_bind(bind) == parsed

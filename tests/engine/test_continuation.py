"""Where a project new to a poller goes on (engine/continuation.py), as a
table: the window of its last stored result, and the time now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from polling.engine.continuation import Continuation, continuation

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
INTERVAL = 20


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("last_stored", "expected"),
    [
        (None, None),  # never stored: afresh
        (ago(5), Continuation(ago(5) + timedelta(seconds=20), late=False)),  # ahead
        (ago(20), Continuation(NOW, late=True)),  # begins now
        (ago(39), Continuation(ago(19), late=True)),  # begun: never skipped
        (ago(40), Continuation(ago(20), late=True)),  # just over: late
        (ago(59), Continuation(ago(39), late=True)),  # over 19 s ago: late
        (ago(60), None),  # over an interval ago: afresh
        (ago(3600), None),
    ],
)
def test_where_a_project_goes_on(last_stored, expected):
    assert continuation(last_stored, INTERVAL, NOW) == expected

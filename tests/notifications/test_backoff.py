"""retry_after(): what a receiver's Retry-After header may ask for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from projects.notifications.backoff import MAX_RETRY_AFTER, retry_after

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "wait"),
    [
        ("120", timedelta(seconds=120)),
        (" 0 ", timedelta(0)),
        ("Thu, 26 Nov 2026 12:05:00 GMT", timedelta(minutes=5)),
        ("Thu, 26 Nov 2026 11:00:00 GMT", timedelta(0)),  # a date gone by
        ("86400", MAX_RETRY_AFTER),
        ("9" * 30, MAX_RETRY_AFTER),  # would overflow timedelta
        (None, None),
        ("", None),
        ("²", None),  # a digit to str.isdigit(), not to int()
        ("soon", None),
    ],
)
def test_a_receiver_can_ask_for_a_wait_but_never_break_delivery(header, wait):
    assert retry_after(header, NOW) == wait

"""Fixtures of the poller's tests."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from django.utils import timezone


@pytest.fixture
def one_minute(monkeypatch):
    """Every ping of the test in one minute of the rate limit's count: the
    clock starts at second 30 and moves a millisecond a reading (pings
    that straddled a minute's end started a new count and were let
    through; a clock that stood still would give two pings one window)."""
    start = timezone.now().replace(second=30, microsecond=0)
    readings = itertools.count()
    monkeypatch.setattr(
        timezone, "now", lambda: start + timedelta(milliseconds=next(readings))
    )
    return start

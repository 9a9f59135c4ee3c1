"""When to try a failed delivery again, and when to give up."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

# About 30 s, 2 min, 10 min, 30 min, then hourly: a receiver that is down
# for a deploy gets the message soon after, one down for a day is not
# hammered.
RETRY_DELAYS = (30, 120, 600, 1800, 3600)
JITTER = 0.2
GIVE_UP_AFTER = timedelta(hours=24)
# A Retry-After longer than this is read as a misconfiguration, not a plan.
MAX_RETRY_AFTER = timedelta(hours=6)


def retry_delay(attempts: int, *, rng: random.Random | None = None) -> timedelta:
    """The wait after the given number of failed attempts (1 = the first),
    spread by +-20 % so that receivers recovering from an outage are not hit
    by every retry in the same second."""
    base = RETRY_DELAYS[min(attempts, len(RETRY_DELAYS)) - 1]
    spread = (rng or random).uniform(1 - JITTER, 1 + JITTER)
    return timedelta(seconds=base * spread)


def retry_after(value: str | None, now: datetime) -> timedelta | None:
    """The wait a Retry-After header asks for (seconds or an HTTP date),
    capped; None when it is missing or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        # Compared before timedelta(): a receiver's 30-digit value would
        # overflow it. ("²".isdigit() is true, hence isascii.)
        seconds = int(value)
        if seconds >= MAX_RETRY_AFTER.total_seconds():
            return MAX_RETRY_AFTER
        wait = timedelta(seconds=seconds)
    else:
        try:
            wait = parsedate_to_datetime(value) - now
        except (TypeError, ValueError):
            return None
    return min(max(wait, timedelta(0)), MAX_RETRY_AFTER)


def gives_up(created_at: datetime, next_attempt_at: datetime) -> bool:
    """Whether a retry at `next_attempt_at` would be past the deadline."""
    return next_attempt_at - created_at > GIVE_UP_AFTER

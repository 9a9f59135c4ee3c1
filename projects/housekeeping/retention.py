"""Retention of raw polls: delete PollResult rows past RESULT_RETENTION_DAYS.

Hourly and daily rollups are left alone, so uptime and charts keep their
history after the polls are gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from projects.housekeeping.chunks import Pacer, delete_older_than
from projects.models import PollResult


@dataclass(frozen=True, slots=True)
class Pruned:
    cutoff: datetime | None  # None: RESULT_RETENTION_DAYS is 0, keep forever
    rows: int
    chunks: int
    finished: bool

    @property
    def rows_removed(self) -> int:
        return self.rows

    def __str__(self) -> str:
        if self.cutoff is None:
            return "Polls are kept forever (RESULT_RETENTION_DAYS=0)."
        more = "" if self.finished else "; more left for the next run"
        return (
            f"Removed {self.rows:,} polls older than {self.cutoff:%Y-%m-%d %H:%M} "
            f"UTC in {self.chunks} chunks{more}."
        )


def result_cutoff(now: datetime, days: int) -> datetime | None:
    """Polls before this are past retention; None when `days` is 0."""
    return now - timedelta(days=days) if days else None


def prune_results(
    *,
    now: datetime | None = None,
    days: int | None = None,
    pacer: Pacer | None = None,
    deadline: float | None = None,
) -> Pruned:
    """Delete the polls older than `days` (RESULT_RETENTION_DAYS when None)
    before `now`, in short chunks; see projects.housekeeping.chunks."""
    now = now or timezone.now()
    days = settings.RESULT_RETENTION_DAYS if days is None else days
    cutoff = result_cutoff(now, days)
    if cutoff is None:
        return Pruned(None, 0, 0, True)
    deleted = delete_older_than(
        PollResult, "polled_at", cutoff, pacer=pacer, deadline=deadline
    )
    return Pruned(cutoff, deleted.rows, deleted.chunks, deleted.finished)

"""Which rollup table holds which part of a time range.

Compaction (projects.housekeeping.compaction) sums finished UTC days into
DailyRollup and removes hourly rollups only of days it has summed. So every
day before the midnight after the newest compacted day is in DailyRollup,
and every hour from that midnight on is in HourlyRollup: the dashboard
reads hourly rollups where they exist and daily ones beyond, and a range
counts the same whichever table its days come from.

A range [start, now] is read as:

- raw polls for its leading part-hour, [start, ceil_hour(start));
- hourly rollups for its leading part-day, [ceil_hour(start),
  ceil_day(start)), and for every hour from the boundary on;
- daily rollups for the whole days in between, [ceil_day(start), boundary).

With the default retention the part-day's hours are still there for every
range that does not start at a midnight (ranges over 30 days do).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Max, Q

from projects.dashboard.queries.ranges import ceil_day, ceil_hour
from projects.models import DailyRollup
from projects.models.results import utc_midnight


def daily_until() -> datetime | None:
    """The midnight after the newest day in DailyRollup; None before the
    first compaction (everything is still hourly)."""
    newest = DailyRollup.objects.aggregate(newest=Max("day"))["newest"]
    return None if newest is None else utc_midnight(newest + timedelta(days=1))


def hourly_part(start: datetime, boundary: datetime | None) -> Q:
    """The HourlyRollup rows that count towards a range from `start`."""
    hours = Q(hour__gte=ceil_hour(start))
    if boundary is None:
        return hours
    return hours & (Q(hour__lt=ceil_day(start)) | Q(hour__gte=boundary))


def daily_part(start: datetime, boundary: datetime | None) -> Q | None:
    """The DailyRollup rows that count towards a range from `start`; None
    when it has no whole day before the boundary."""
    if boundary is None or ceil_day(start) >= boundary:
        return None
    return Q(day__gte=ceil_day(start).date(), day__lt=boundary.date())

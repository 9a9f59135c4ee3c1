"""The time ranges the pages offer, and how each one is charted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from projects.models.results import rollup_hour, utc_midnight

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR


@dataclass(frozen=True, slots=True)
class TimeRange:
    key: str  # as it appears in the URL
    label: str
    length: timedelta
    # Chart buckets: at most about 300 per range.
    bucket_seconds: int
    # Hourly rollups hold everything longer ranges need; shorter ranges
    # need finer buckets than an hour, so they read raw polls.
    from_rollups: bool
    # Time axis labels fall on multiples of this.
    tick_seconds: int
    # Ranges longer than the hourly rollups are kept start at a UTC
    # midnight: their oldest days are only summed per day.
    whole_days: bool = False

    def start(self, now: datetime) -> datetime:
        start = now - self.length
        return ceil_day(start) if self.whole_days else start


RANGES = {
    r.key: r
    for r in (
        TimeRange("1h", "1 hour", timedelta(hours=1), 15, False, 10 * MINUTE),
        TimeRange("24h", "24 hours", timedelta(hours=24), 5 * MINUTE, False, 4 * HOUR),
        TimeRange("7d", "7 days", timedelta(days=7), HOUR, True, DAY),
        TimeRange("30d", "30 days", timedelta(days=30), 3 * HOUR, True, 5 * DAY),
        TimeRange("90d", "90 days", timedelta(days=90), DAY, True, 15 * DAY, True),
        TimeRange("1y", "1 year", timedelta(days=365), 2 * DAY, True, 60 * DAY, True),
    )
}
DEFAULT_RANGE = RANGES["24h"]
OVERVIEW_RANGES = (RANGES["24h"], RANGES["7d"], RANGES["30d"])


def ceil_hour(moment: datetime) -> datetime:
    """The first whole hour at or after `moment`."""
    start = rollup_hour(moment)
    return start if start == moment else start + timedelta(hours=1)


def ceil_day(moment: datetime) -> datetime:
    """The first UTC midnight at or after `moment`."""
    start = utc_midnight(rollup_hour(moment).date())
    return start if start == moment else start + timedelta(days=1)

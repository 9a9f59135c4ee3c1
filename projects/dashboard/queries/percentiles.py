"""The chart's percentile lines: p50, p95 and p99 of one project's
response times per chart point, read from the rollups' histograms
(projects/latency/histogram.py) for the chosen range.

A point is one chart bucket, but never finer than an hour: that is what
a rollup holds, so the 1-hour and 24-hour ranges get a point per hour.
Ranges of whole days read daily rollups for their compacted days, as the
chart's other lines do (sources.py). The histograms are merged here, in
Python: a 1-year range is about 365 daily and 48 hourly rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from projects.dashboard.queries.ranges import HOUR, TimeRange
from projects.dashboard.queries.sources import daily_part, daily_until, hourly_part
from projects.latency import histogram
from projects.models import DailyRollup, HourlyRollup
from projects.models.results import rollup_hour, utc_midnight

# The lines drawn, in the legend's order.
CHART_PERCENTILES = (50, 95, 99)


@dataclass(frozen=True, slots=True)
class PercentilePoint:
    start: datetime
    width_seconds: int
    p50_ms: int
    p95_ms: int
    p99_ms: int


def percentile_width(time_range: TimeRange) -> int:
    """Seconds per point: the chart's bucket, at least an hour."""
    return max(time_range.bucket_seconds, HOUR)


def percentile_points(
    project_id: int, time_range: TimeRange, now: datetime
) -> list[PercentilePoint]:
    """The range's points with a response, oldest first."""
    start = time_range.start(now)
    width = percentile_width(time_range)
    merged: dict[int, dict[str, int]] = {}
    hours = HourlyRollup.objects.filter(project_id=project_id)
    if time_range.whole_days:
        boundary = daily_until()
        hours = hours.filter(hourly_part(start, boundary))
        if (days := daily_part(start, boundary)) is not None:
            rows = DailyRollup.objects.filter(days, project_id=project_id)
            for day, counts in rows.values_list("day", "histogram"):
                _add(merged, utc_midnight(day), width, counts)
    else:
        hours = hours.filter(hour__gte=rollup_hour(start))
    for hour, counts in hours.values_list("hour", "histogram"):
        _add(merged, hour, width, counts)
    points = []
    for bucket in sorted(merged):
        counts = merged[bucket]
        if not counts:
            continue
        p50, p95, p99 = (histogram.percentile(counts, p) for p in CHART_PERCENTILES)
        points.append(
            PercentilePoint(datetime.fromtimestamp(bucket, UTC), width, p50, p95, p99)
        )
    return points


def _add(merged: dict, moment: datetime, width: int, counts) -> None:
    bucket = int(moment.timestamp()) // width * width
    histogram.add(merged.setdefault(bucket, {}), counts)

"""Uptime: the share of up polls over a time range, for a page of projects.

Whole days come from the daily rollups, whole hours from the hourly ones,
and only the part of the range before its first whole hour from raw polls
(projects.dashboard.queries.sources says which is where), so a 30-day uptime reads
about 30 daily and 48 hourly rollup rows and at most an hour of polls per
project, and a year the same plus 335 daily rows.

Polls made during a maintenance window are counted apart: uptime is the
share of up polls among the others, and the maintenance share is shown
next to it instead of being counted as down.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from operator import or_

from django.db.models import Count, Q, Sum

from projects.dashboard.queries.ranges import TimeRange, ceil_hour
from projects.dashboard.queries.sources import daily_part, daily_until, hourly_part
from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import DailyRollup, HourlyRollup, PollResult, Status

COUNTS = ("polls", "failures", "maintenance_polls", "maintenance_failures")


@dataclass(frozen=True, slots=True)
class Uptime:
    """Poll counts over a range; the maintenance ones are part of polls
    and failures."""

    polls: int = 0
    failures: int = 0
    maintenance_polls: int = 0
    maintenance_failures: int = 0

    @property
    def counted_polls(self) -> int:
        return self.polls - self.maintenance_polls

    @property
    def counted_failures(self) -> int:
        return self.failures - self.maintenance_failures

    @property
    def percent(self) -> float | None:
        """Up polls as a percentage of those outside maintenance; None when
        there were none."""
        if not self.counted_polls:
            return None
        return 100 * (self.counted_polls - self.counted_failures) / self.counted_polls

    @property
    def maintenance_percent(self) -> float | None:
        """The share of polls made during maintenance; None when none were."""
        if not self.maintenance_polls:
            return None
        return 100 * self.maintenance_polls / self.polls


def uptime_by_project(
    project_ids: Sequence[int],
    ranges: Iterable[TimeRange],
    now: datetime,
    *,
    maintenance: MaintenanceSchedule | None = None,
) -> dict[int, dict[str, Uptime]]:
    """{project id: {range key: Uptime}} for every project and range.

    A project that started polling within a range is measured over the
    polls it has, so a day-old project's 30-day uptime is its 1-day uptime.
    `maintenance`, when the caller has loaded it already, must cover the
    ranges' first hours (maintenance_for() does).
    """
    ranges = list(ranges)
    if maintenance is None:
        maintenance = maintenance_for(ranges, now)
    boundary = daily_until()
    counts: dict[int, Counter] = defaultdict(Counter)
    for rows in (
        _whole_days(project_ids, ranges, now, boundary),
        _whole_hours(project_ids, ranges, now, boundary),
        _leading_part_hours(project_ids, ranges, now, maintenance.poll_filter()),
    ):
        for row in rows:
            counts[row.pop("project_id")].update(row)
    return {
        project_id: {
            r.key: Uptime(*(counts[project_id][f"{count}_{r.key}"] for count in COUNTS))
            for r in ranges
        }
        for project_id in project_ids
    }


def _whole_days(
    project_ids: Sequence[int],
    ranges: list[TimeRange],
    now: datetime,
    boundary: datetime | None,
) -> Iterable[dict]:
    parts = {r.key: daily_part(r.start(now), boundary) for r in ranges}
    if not any(parts.values()):
        return []
    return _summed(DailyRollup, project_ids, parts)


def _whole_hours(
    project_ids: Sequence[int],
    ranges: list[TimeRange],
    now: datetime,
    boundary: datetime | None,
) -> Iterable[dict]:
    parts = {r.key: hourly_part(r.start(now), boundary) for r in ranges}
    return _summed(HourlyRollup, project_ids, parts)


def _summed(model, project_ids: Sequence[int], parts: dict[str, Q | None]):
    """polls_<key> and failures_<key> per project, summed over the rollup
    rows each range's part selects."""
    sums = {}
    for key, part in parts.items():
        if part is None:
            continue
        for count in COUNTS:
            sums[f"{count}_{key}"] = Sum(count, filter=part, default=0)
    inside = reduce(or_, (part for part in parts.values() if part is not None))
    return (
        model.objects.filter(inside, project_id__in=project_ids)
        .values("project_id")
        .annotate(**sums)
        .order_by()
    )


def _leading_part_hours(
    project_ids: Sequence[int],
    ranges: list[TimeRange],
    now: datetime,
    maintenance: Q | None,
) -> Iterable[dict]:
    counts = {}
    parts = []
    down = Q(status=Status.DOWN)
    for r in ranges:
        start = r.start(now)
        part = Q(polled_at__gte=start, polled_at__lt=ceil_hour(start))
        parts.append(part)
        counts[f"polls_{r.key}"] = Count("polled_at", filter=part)
        counts[f"failures_{r.key}"] = Count("polled_at", filter=part & down)
        if maintenance is not None:
            part &= maintenance
            counts[f"maintenance_polls_{r.key}"] = Count("polled_at", filter=part)
            counts[f"maintenance_failures_{r.key}"] = Count(
                "polled_at", filter=part & down
            )
    return (
        PollResult.objects.filter(project_id__in=project_ids)
        .filter(reduce(or_, parts))
        .values("project_id")
        .annotate(**counts)
        .order_by()
    )


def maintenance_for(ranges: Iterable[TimeRange], now: datetime) -> MaintenanceSchedule:
    """The maintenance windows from the start of the longest range to now."""
    start = min(r.start(now) for r in ranges)
    return MaintenanceSchedule.load(start, now)

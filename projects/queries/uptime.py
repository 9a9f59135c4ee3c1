"""Uptime: the share of up polls over a time range, for a page of projects.

Whole days come from the daily rollups, whole hours from the hourly ones,
and only the part of the range before its first whole hour from raw polls
(projects.queries.sources says which is where), so a 30-day uptime reads
about 30 daily and 48 hourly rollup rows and at most an hour of polls per
project, and a year the same plus 335 daily rows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from operator import or_

from django.db.models import Count, Q, Sum

from projects.models import DailyRollup, HourlyRollup, PollResult, Status
from projects.queries.ranges import TimeRange, ceil_hour
from projects.queries.sources import daily_part, daily_until, hourly_part


@dataclass(frozen=True, slots=True)
class Uptime:
    polls: int = 0
    failures: int = 0

    @property
    def percent(self) -> float | None:
        """Up polls as a percentage; None when there were no polls."""
        if not self.polls:
            return None
        return 100 * (self.polls - self.failures) / self.polls


def uptime_by_project(
    project_ids: Sequence[int], ranges: Iterable[TimeRange], now: datetime
) -> dict[int, dict[str, Uptime]]:
    """{project id: {range key: Uptime}} for every project and range.

    A project that started polling within a range is measured over the
    polls it has, so a day-old project's 30-day uptime is its 1-day uptime.
    """
    ranges = list(ranges)
    boundary = daily_until()
    counts: dict[int, Counter] = defaultdict(Counter)
    for rows in (
        _whole_days(project_ids, ranges, now, boundary),
        _whole_hours(project_ids, ranges, now, boundary),
        _leading_part_hours(project_ids, ranges, now),
    ):
        for row in rows:
            counts[row.pop("project_id")].update(row)
    return {
        project_id: {
            r.key: Uptime(
                counts[project_id][f"polls_{r.key}"],
                counts[project_id][f"failures_{r.key}"],
            )
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
        sums[f"polls_{key}"] = Sum("polls", filter=part, default=0)
        sums[f"failures_{key}"] = Sum("failures", filter=part, default=0)
    inside = reduce(or_, (part for part in parts.values() if part is not None))
    return (
        model.objects.filter(inside, project_id__in=project_ids)
        .values("project_id")
        .annotate(**sums)
        .order_by()
    )


def _leading_part_hours(
    project_ids: Sequence[int], ranges: list[TimeRange], now: datetime
) -> Iterable[dict]:
    counts = {}
    parts = []
    for r in ranges:
        start = r.start(now)
        part = Q(polled_at__gte=start, polled_at__lt=ceil_hour(start))
        parts.append(part)
        counts[f"polls_{r.key}"] = Count("id", filter=part)
        counts[f"failures_{r.key}"] = Count("id", filter=part & Q(status=Status.DOWN))
    return (
        PollResult.objects.filter(project_id__in=project_ids)
        .filter(reduce(or_, parts))
        .values("project_id")
        .annotate(**counts)
        .order_by()
    )

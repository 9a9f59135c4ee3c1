"""Uptime: the share of up polls over a time range, for a page of projects.

Whole hours come from the hourly rollups; only the part of the range
before its first whole hour is counted from raw polls, so a 30-day uptime
reads about 720 rollup rows and at most an hour of polls per project.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from operator import or_

from django.db.models import Count, Q, Sum

from projects.models import HourlyRollup, PollResult, Status
from projects.queries.ranges import TimeRange, ceil_hour


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
    counts: dict[int, Counter] = defaultdict(Counter)
    for rows in (
        _whole_hours(project_ids, ranges, now),
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


def _whole_hours(
    project_ids: Sequence[int], ranges: list[TimeRange], now: datetime
) -> Iterable[dict]:
    sums = {}
    for r in ranges:
        inside = Q(hour__gte=ceil_hour(r.start(now)))
        sums[f"polls_{r.key}"] = Sum("polls", filter=inside, default=0)
        sums[f"failures_{r.key}"] = Sum("failures", filter=inside, default=0)
    earliest = min(ceil_hour(r.start(now)) for r in ranges)
    return (
        HourlyRollup.objects.filter(project_id__in=project_ids, hour__gte=earliest)
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

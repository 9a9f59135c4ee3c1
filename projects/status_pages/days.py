"""One cell per project and UTC day for a status page's uptime bars.

Days the compaction has summed come from DailyRollup, later ones from
HourlyRollup summed per day (projects.dashboard.queries.sources says which
is where), so a year of 500 projects costs three queries, whatever the
number of projects: the boundary, the daily rows, the hourly rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db.models import Q, Sum
from django.db.models.functions import TruncDate
from django.utils.html import escape

from projects.dashboard.queries.sources import daily_part, daily_until
from projects.dashboard.queries.uptime import COUNTS, Uptime
from projects.models import DailyRollup, HourlyRollup
from projects.notifications.messages import duration_text
from projects.rollups import utc_midnight

SECONDS_PER_DAY = 24 * 60 * 60


@dataclass(frozen=True, slots=True)
class Day:
    day: date
    uptime: Uptime
    interval_seconds: int

    @property
    def down_seconds(self) -> int:
        """Failed polls times the project's interval: each failed poll
        stands for the time until the next one."""
        failures = self.uptime.counted_failures
        return min(SECONDS_PER_DAY, failures * self.interval_seconds)

    @property
    def level(self) -> str:
        """ok, minor, major or none: the cell's colour and height."""
        percent = self.uptime.percent
        if percent is None:
            return "none"
        if percent >= 99.9:
            return "ok"
        return "minor" if percent >= 99 else "major"

    @property
    def label(self) -> str:
        """ "2026-11-20: 99.95% up, 43 s down"."""
        percent = self.uptime.percent
        if percent is None:
            text = "no data"
            if self.uptime.maintenance_polls:
                text = "maintenance"
        else:
            text = (
                f"{percent_text(percent)} up, {duration_text(self.down_seconds)} down"
            )
            if self.uptime.maintenance_polls:
                text += ", maintenance"
        return f"{self.day.isoformat()}: {text}"


def percent_text(percent: float) -> str:
    """99.95%, 100%, 87.5%: two decimals at most, never 100% for a
    single failure."""
    if percent >= 100:
        return "100%"
    text = f"{min(percent, 99.99):.2f}".rstrip("0").rstrip(".")
    return f"{text}%"


def day_range(days: int, now: datetime) -> list[date]:
    today = now.astimezone(UTC).date()
    return [today - timedelta(days=days - 1 - n) for n in range(days)]


def days_by_project(
    intervals: dict[int, int], days: int, now: datetime
) -> dict[int, list[Day]]:
    """{project id: its Day cells, oldest first} over the last `days` UTC
    days, today included; `intervals` maps each project to its interval
    in seconds."""
    wanted = day_range(days, now)
    start = utc_midnight(wanted[0])
    ids = list(intervals)
    counts: dict[int, dict[date, list[int]]] = defaultdict(dict)
    if ids:
        boundary = daily_until()
        for row in _daily_rows(ids, start, boundary):
            _add(counts, row)
        for row in _hourly_rows(ids, start, boundary):
            _add(counts, row)
    empty = [0] * len(COUNTS)
    return {
        pk: [
            Day(day, Uptime(*counts[pk].get(day, empty)), intervals[pk])
            for day in wanted
        ]
        for pk in ids
    }


def _add(counts, row: dict) -> None:
    values = [row[count] or 0 for count in COUNTS]
    cell = counts[row["project_id"]].get(row["day"])
    if cell is not None:
        values = [a + b for a, b in zip(cell, values, strict=True)]
    counts[row["project_id"]][row["day"]] = values


def _daily_rows(ids: Sequence[int], start: datetime, boundary: datetime | None):
    part = daily_part(start, boundary)
    if part is None:
        return []
    return DailyRollup.objects.filter(part, project_id__in=ids).values(
        "project_id", "day", *COUNTS
    )


def _hourly_rows(ids: Sequence[int], start: datetime, boundary: datetime | None):
    since = start if boundary is None else max(start, boundary)
    return (
        HourlyRollup.objects.filter(Q(hour__gte=since), project_id__in=ids)
        .annotate(day=TruncDate("hour", tzinfo=UTC))
        .values("project_id", "day")
        .annotate(**{count: Sum(count) for count in COUNTS})
        .order_by()
    )


def total(cells: Sequence[Day]) -> Uptime:
    """The cells' polls summed: the uptime over the whole bar."""
    sums = [0] * len(COUNTS)
    for cell in cells:
        for n, count in enumerate(COUNTS):
            sums[n] += getattr(cell.uptime, count)
    return Uptime(*sums)


def bar_html(cells: Sequence[Day]) -> str:
    """The bar's cells as HTML, built here rather than in a template: a
    page of 500 projects over a year has 182,500 of them."""
    return "".join(
        f'<i class="d-{cell.level}" role="img" title="{label}" '
        f'aria-label="{label}"></i>'
        for cell in cells
        for label in (escape(cell.label),)
    )

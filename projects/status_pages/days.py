"""One cell per project and UTC day for a status page's uptime bars.

Days the compaction has summed come from DailyRollup, later ones from
HourlyRollup summed per day (projects.dashboard.queries.sources says which
is where). A page of 500 projects over a year has 182,500 cells, almost
all of them perfect days (polls, none failed, no maintenance), so the
daily rollups are read as a summary per project (how many days, the
first and the last, their polls) plus only the days that were not perfect;
a perfect day's cell is the same string for every project. That is four
queries whatever the number of projects, and a fifth only when some
project has days missing between its first and its last; the compacted
days' cells are then cached until the compaction moves on, so a page
rebuilt after a change reads only the recent hours.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from html import escape  # Django's, without its check for lazy strings

from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, Min, Q, QuerySet, Sum
from django.db.models.functions import TruncDate

from projects.dashboard.queries.sources import daily_part, daily_until
from projects.dashboard.queries.uptime import COUNTS, Uptime
from projects.models import DailyRollup, HourlyRollup
from projects.models.results import IMPERFECT_DAY, utc_midnight
from projects.notifications.messages import duration_text

SECONDS_PER_DAY = 24 * 60 * 60
COMPACTED_CACHE_SECONDS = 10 * 60
PERFECT = (1, 0, 0, 0)  # in the order of COUNTS: polls, none failed
NO_POLLS = (0, 0, 0, 0)


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
            text = "maintenance" if self.uptime.maintenance_polls else "no data"
        else:
            down = duration_text(self.down_seconds)
            text = f"{percent_text(percent)} up, {down} down"
            if self.uptime.maintenance_polls:
                text += ", maintenance"
        return f"{self.day.isoformat()}: {text}"

    @property
    def html(self) -> str:
        return cell_html(self.level, self.label)


class Cells:
    """The cells of one page build, each distinct day formatted once: on
    most pages every perfect day, every missing one and today's cell are
    the same for all projects, and a bad day often hits several at once."""

    def __init__(self) -> None:
        self._made: dict[tuple, str] = {}

    def of(self, day: date, counts: Sequence[int], interval: int) -> str:
        """`counts` in the order of COUNTS."""
        counts = tuple(counts)
        # The interval only turns failures into downtime.
        key = (day, counts, interval if counts[1] else 0)
        html = self._made.get(key)
        if html is None:
            html = self._made[key] = Day(day, Uptime(*counts), interval).html
        return html

    def perfect(self, day: date) -> str:
        return self.of(day, PERFECT, 0)

    def missing(self, day: date) -> str:
        return self.of(day, NO_POLLS, 0)


@dataclass(frozen=True, slots=True)
class Bar:
    html: str
    uptime: Uptime  # over the whole bar


def cell_html(level: str, label: str) -> str:
    """One day's cell: an image to screen readers, named by its label,
    which the stylesheet also shows as its tooltip. The label is written
    once and a good day (nearly every cell) has no class, the bar's
    default look: a page of 45,000 cells is built, gzipped and sent in
    proportion to these bytes."""
    css = "" if level == "ok" else f' class="d-{level}"'
    return f'<i{css} role="img" aria-label="{escape(label)}"></i>'


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


def bars_by_project(
    intervals: dict[int, int],
    days: int,
    now: datetime,
    *,
    project_ids: Iterable[int] | QuerySet | None = None,
) -> dict[int, Bar]:
    """{project id: its bar} over the last `days` UTC days, today
    included; `intervals` maps each project to its interval in seconds.
    `project_ids`, the same projects as a subquery, is cheaper to send
    than a long list."""
    wanted = day_range(days, now)
    if not intervals:
        return {}
    if project_ids is None:
        project_ids = list(intervals)
    boundary = daily_until()
    compacted = [d for d in wanted if boundary is not None and d < boundary.date()]
    cells = Cells()
    daily = compacted_bars(intervals, compacted, boundary, cells, project_ids)
    since = utc_midnight(wanted[0])
    if boundary is not None:
        since = max(since, boundary)
    hourly: dict[int, dict[date, tuple[int, ...]]] = defaultdict(dict)
    for pk, day, *counts in _hourly_counts(project_ids, since):
        hourly[pk][day] = tuple(value or 0 for value in counts)
    recent = wanted[len(compacted) :]
    missing = [cells.missing(day) for day in recent]
    bars = {}
    for pk, interval in intervals.items():
        html, sums = daily.get(pk, ("", NO_POLLS))
        row = list(missing)
        for n, day in enumerate(recent):
            counts = hourly[pk].get(day)
            if counts is not None:
                row[n] = cells.of(day, counts, interval)
                sums = [a + b for a, b in zip(sums, counts, strict=True)]
        bars[pk] = Bar(html + "".join(row), Uptime(*sums))
    return bars


def compacted_bars(
    intervals: dict[int, int],
    wanted: list[date],
    boundary: datetime | None,
    cells: Cells,
    project_ids: Iterable[int] | QuerySet,
) -> dict[int, tuple[str, list[int]]]:
    """{project id: (HTML of its cells, summed counts)} over days the
    compaction has summed. Those rows change only when the compaction
    moves the boundary (part of the key), so this is cached a while:
    after a change, a page re-renders without reading a year again."""
    if not wanted:
        return {}
    shape = hashlib.blake2b(repr(sorted(intervals.items())).encode(), digest_size=12)
    until = f"{boundary:%Y%m%d}" if boundary else "none"
    key = f"status-days:{wanted[0]}:{wanted[-1]}:{until}:{shape.hexdigest()}"
    found = cache.get(key)
    if found is None:
        found = _Reading(project_ids, wanted, boundary).bars(intervals, cells)
        cache.set(key, found, COMPACTED_CACHE_SECONDS)
    return found


class _Reading:
    """The daily rollups of a page's projects over compacted days."""

    def __init__(
        self, ids: Iterable[int] | QuerySet, wanted: list[date], boundary
    ) -> None:
        self.wanted = wanted
        self.index = {day: n for n, day in enumerate(wanted)}
        part = daily_part(utc_midnight(wanted[0]), boundary)
        self.summary = _summaries(ids, part)
        self.odd = defaultdict(dict)  # project -> {day: counts}
        # The query's condition is the partial index's, for PostgreSQL to use it.
        for pk, day, *counts in _daily_counts(ids, part & IMPERFECT_DAY):
            self.odd[pk][day] = counts
        gapped = [pk for pk, row in self.summary.items() if _has_gaps(row)]
        self.present = defaultdict(set)
        if gapped:
            for pk, day in _daily_days(gapped, part):
                self.present[pk].add(day)

    def bars(
        self, intervals: dict[int, int], cells: Cells
    ) -> dict[int, tuple[str, list[int]]]:
        perfect = [cells.perfect(day) for day in self.wanted]
        missing = [cells.missing(day) for day in self.wanted]
        return {
            pk: self._bar(pk, interval, cells, perfect, missing)
            for pk, interval in intervals.items()
        }

    def _bar(
        self, pk: int, interval: int, cells: Cells, perfect, missing
    ) -> tuple[str, list[int]]:
        row = list(missing)
        summary = self.summary.get(pk)
        if summary is None:
            return "".join(row), list(NO_POLLS)
        first, last = self.index[summary["first"]], self.index[summary["last"]]
        row[first : last + 1] = perfect[first : last + 1]
        if pk in self.present:
            for n in range(first, last + 1):
                if self.wanted[n] not in self.present[pk]:
                    row[n] = missing[n]
        sums = [summary["polls"] or 0, 0, 0, 0]
        for day, counts in self.odd[pk].items():
            row[self.index[day]] = cells.of(day, counts, interval)
            for n in range(1, len(COUNTS)):
                sums[n] += counts[n]
        return "".join(row), sums


def _has_gaps(summary: dict) -> bool:
    return summary["days"] != (summary["last"] - summary["first"]).days + 1


def _summaries(ids: Iterable[int] | QuerySet, part: Q) -> dict[int, dict]:
    """Per project: its days, the first and the last, and its polls. Only
    polls: failures and maintenance (maintenance_failures are failures
    too) are on imperfect days alone, which are read one by one anyway,
    and every summed column cost the database about a millisecond at 500
    projects over 90 days."""
    fields = ("project_id", "days", "first", "last", "polls")
    rows = (
        DailyRollup.objects.filter(part, project_id__in=ids)
        .values("project_id")
        .annotate(
            days=Count("day"),
            first=Min("day"),
            last=Max("day"),
            polls=Sum("polls"),
        )
        .order_by()
        .values_list(*fields)
    )
    return {row[0]: dict(zip(fields, row, strict=True)) for row in _rows(rows)}


def _daily_counts(ids: Iterable[int] | QuerySet, part: Q):
    return _rows(
        DailyRollup.objects.filter(part, project_id__in=ids).values_list(
            "project_id", "day", *COUNTS
        )
    )


def _daily_days(ids: Iterable[int] | QuerySet, part: Q):
    return _rows(
        DailyRollup.objects.filter(part, project_id__in=ids).values_list(
            "project_id", "day"
        )
    )


def _hourly_counts(ids: Iterable[int] | QuerySet, since: datetime):
    return _rows(
        HourlyRollup.objects.filter(hour__gte=since, project_id__in=ids)
        .annotate(day=TruncDate("hour", tzinfo=UTC))
        .values("project_id", "day")
        .annotate(**{count: Sum(count) for count in COUNTS})
        .order_by()
        .values_list("project_id", "day", *COUNTS)
    )


def _rows(query: QuerySet) -> Iterable[tuple]:
    """A values_list() query's rows. On PostgreSQL straight from the
    cursor: what it returns for these columns (ids, dates, counts and
    their sums) is already the Python type, and Django's converters, a
    call or two per value, were about a tenth of a cold page's CPU
    (45,000 values at 500 projects). SQLite needs them for its dates."""
    if connection.vendor != "postgresql":
        return query
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()

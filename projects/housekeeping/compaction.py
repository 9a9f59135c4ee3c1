"""Daily rollups: finished UTC days of hourly rollups summed into
DailyRollup, then rollups past their retention removed.

Days are compacted oldest first, each in its own transaction, from the
newest day already compacted (again, for polls written late) up to
yesterday. The newest compacted day is also the dashboard's boundary:
days up to it are read from DailyRollup, later ones from HourlyRollup
(projects.dashboard.queries.sources). So hourly rows are only removed before that
boundary, and the dashboard never finds a day in neither table.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import DateField, Max, Min, Sum, Value
from django.utils import timezone

from projects.housekeeping.chunks import Deleted, Pacer, delete_older_than
from projects.housekeeping.rollups import insert_select
from projects.latency import histogram
from projects.models import DailyRollup, HourlyRollup
from projects.models.results import utc_midnight

DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Compacted:
    days: int  # days summed into DailyRollup
    daily_rows: int  # DailyRollup rows written
    hourly_removed: int
    daily_removed: int
    finished: bool = True

    @property
    def rows_removed(self) -> int:
        return self.hourly_removed + self.daily_removed

    def __str__(self) -> str:
        return (
            f"Compacted {self.days} days into {self.daily_rows:,} daily rollups; "
            f"removed {self.hourly_removed:,} hourly and {self.daily_removed:,} "
            "daily rollups past retention."
        )


def newest_compacted_day() -> date | None:
    """The last day DailyRollup holds; None before the first compaction."""
    return DailyRollup.objects.aggregate(last=Max("day"))["last"]


def compact_rollups(
    *,
    now: datetime | None = None,
    since: date | None = None,
    pacer: Pacer | None = None,
    deadline: float | None = None,
) -> Compacted:
    """Compact finished days (from `since` when given, to recompute them),
    then apply HOURLY_RETENTION_DAYS and DAILY_RETENTION_DAYS before `now`."""
    today = (now or timezone.now()).astimezone(UTC).date()
    days = days_to_compact(today, since=since)
    daily_rows = sum(compact_day(day) for day in days)
    hourly = _delete_before(HourlyRollup, "hour", hourly_cutoff(today), pacer, deadline)
    daily = _delete_before(DailyRollup, "day", daily_cutoff(today), pacer, deadline)
    return Compacted(
        len(days),
        daily_rows,
        hourly.rows,
        daily.rows,
        hourly.finished and daily.finished,
    )


def days_to_compact(today: date, *, since: date | None = None) -> list[date]:
    """Finished days to (re)compute, oldest first. The newest compacted day
    is done again, for polls written after it was, unless its hourly rows
    may be gone already."""
    if since is None:
        since = newest_compacted_day()
        if since is None or since < _hourly_horizon(today):
            since = _first_hourly_day(since)
    if since is None:
        return []
    return [since + DAY * n for n in range((today - since).days)]


def _first_hourly_day(after: date | None) -> date | None:
    """The first day with hourly rollups, after `after` when given."""
    hours = HourlyRollup.objects.all()
    if after is not None:
        hours = hours.filter(hour__gte=utc_midnight(after + DAY))
    first = hours.aggregate(first=Min("hour"))["first"]
    return None if first is None else first.astimezone(UTC).date()


def compact_day(day: date) -> int:
    """Replace `day`'s daily rollups with the sums of its hourly ones.
    Returns how many were written."""
    start = utc_midnight(day)
    sums = (
        HourlyRollup.objects.filter(hour__gte=start, hour__lt=start + DAY)
        .values("project_id")
        .annotate(
            day=Value(day, output_field=DateField()),
            polls=Sum("polls"),
            failures=Sum("failures"),
            responses=Sum("responses"),
            response_time_sum_ms=Sum("response_time_sum_ms"),
            response_time_max_ms=Max("response_time_max_ms"),
            maintenance_polls=Sum("maintenance_polls"),
            maintenance_failures=Sum("maintenance_failures"),
        )
        .order_by()
    )
    with transaction.atomic():
        DailyRollup.objects.filter(day=day).delete()
        written = insert_select(DailyRollup, sums)
        _sum_histograms(day, start)
        return written


def _sum_histograms(day: date, start: datetime) -> None:
    """Each daily rollup's histogram: its hours' histograms added up."""
    totals: dict[int, dict[str, int]] = {}
    hours = HourlyRollup.objects.filter(hour__gte=start, hour__lt=start + DAY)
    for project_id, counts in hours.values_list("project_id", "histogram"):
        histogram.add(totals.setdefault(project_id, {}), counts)
    days = DailyRollup.objects.filter(day=day, project_id__in=list(totals))
    changed = []
    for row in days.only("pk", "project_id"):
        row.histogram = totals[row.project_id]
        changed.append(row)
    DailyRollup.objects.bulk_update(changed, ["histogram"], batch_size=500)


def _hourly_horizon(today: date) -> date:
    """The first day whose hourly rollups are surely all still there."""
    days = settings.HOURLY_RETENTION_DAYS
    return today - DAY * days if days else date.min


def hourly_cutoff(today: date) -> datetime | None:
    """Hourly rollups before this go: past retention, and already in
    DailyRollup. None (nothing goes) while HOURLY_RETENTION_DAYS is 0."""
    newest = newest_compacted_day()
    if not settings.HOURLY_RETENTION_DAYS or newest is None:
        return None
    return utc_midnight(min(_hourly_horizon(today), newest + DAY))


def daily_cutoff(today: date) -> date | None:
    """None (nothing goes) while DAILY_RETENTION_DAYS is 0."""
    days = settings.DAILY_RETENTION_DAYS
    return today - DAY * days if days else None


def _delete_before(model, field_name, cutoff, pacer, deadline) -> Deleted:
    if cutoff is None:
        return Deleted()
    return delete_older_than(model, field_name, cutoff, pacer=pacer, deadline=deadline)

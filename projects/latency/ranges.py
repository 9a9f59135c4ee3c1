"""What the rollups say about the polls of a range [start, now]: counts
and the response-time histogram, per project.

Read as the dashboard reads uptime (projects/dashboard/queries/sources.py
states why these parts cover a range exactly once): raw polls for the
leading part-hour, hourly rollups from there to the first midnight and
from the newest compacted day on, daily rollups for the whole days in
between. Kept here, apart from the pages, because the objectives (a
scheduled task) read ranges too and must not import a page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.db.models import Max, Q

from projects.latency import histogram
from projects.models import DailyRollup, HourlyRollup, PollResult, Status
from projects.models.results import rollup_hour, utc_midnight

_HOUR = timedelta(hours=1)
_DAY = timedelta(days=1)


@dataclass
class RangeSums:
    """One project's polls in a range, summed."""

    polls: int = 0
    failures: int = 0
    maintenance_polls: int = 0
    maintenance_failures: int = 0
    histogram: dict[str, int] = field(default_factory=dict)

    def percentiles(self) -> dict[str, int | None]:
        return histogram.percentiles(self.histogram)


def range_sums(
    project_ids: list[int], start: datetime, end: datetime | None = None
) -> dict[int, RangeSums]:
    """Each project's sums from `start` to `end` (now when None; every
    project of `project_ids` has an entry). Polls of the raw part-hours
    count without their maintenance split: at most an hour at each end."""
    sums = {pk: RangeSums() for pk in project_ids}
    first_hour = _ceil(start, _HOUR)
    last_hour = None if end is None else max(rollup_hour(end), first_hour)
    boundary = _daily_until()
    hours = Q(hour__gte=first_hour)
    if last_hour is not None:
        hours &= Q(hour__lt=last_hour)
    if boundary is not None:
        # The days in between are read whole; after the last whole day
        # (or from the boundary on) hours again.
        days_end = boundary if end is None else min(boundary, _floor_day(end))
        hours &= (
            Q(hour__lt=_ceil(start, _DAY))
            | Q(hour__gte=boundary)
            | Q(hour__gte=days_end)
        )
        days = Q(day__gte=_ceil(start, _DAY).date(), day__lt=days_end.date())
        _add_rollups(sums, DailyRollup.objects.filter(days), project_ids)
    _add_rollups(sums, HourlyRollup.objects.filter(hours), project_ids)
    raw = Q(polled_at__gte=start, polled_at__lt=first_hour)
    if end is not None:
        raw = Q(polled_at__gte=start, polled_at__lt=min(first_hour, end)) | Q(
            polled_at__gte=last_hour, polled_at__lt=end
        )
    leading = PollResult.objects.filter(raw, project_id__in=project_ids).values_list(
        "project_id", "status", "response_time_ms"
    )
    for project_id, status, ms in leading:
        row = sums[project_id]
        row.polls += 1
        row.failures += status == Status.DOWN
        if ms is not None:
            histogram.add(row.histogram, {histogram.bucket(ms): 1})
    return sums


def _add_rollups(sums: dict[int, RangeSums], rows, project_ids: list[int]) -> None:
    values = rows.filter(project_id__in=project_ids).values_list(
        "project_id",
        "polls",
        "failures",
        "maintenance_polls",
        "maintenance_failures",
        "histogram",
    )
    for project_id, polls, failures, m_polls, m_failures, counts in values:
        row = sums[project_id]
        row.polls += polls
        row.failures += failures
        row.maintenance_polls += m_polls
        row.maintenance_failures += m_failures
        histogram.add(row.histogram, counts)


def _daily_until() -> datetime | None:
    newest = DailyRollup.objects.aggregate(newest=Max("day"))["newest"]
    return None if newest is None else utc_midnight(newest + _DAY)


def _floor_day(moment: datetime) -> datetime:
    return utc_midnight(rollup_hour(moment).date())


def _ceil(moment: datetime, step: timedelta) -> datetime:
    """The first whole hour (or UTC midnight) at or after `moment`."""
    floor = rollup_hour(moment)
    if step == _DAY:
        floor = utc_midnight(floor.astimezone(UTC).date())
    return floor if floor == moment else floor + step

"""The API's own read: a project's mean response time over a range, summed
from the same parts of the same tables the dashboard's uptime reads
(projects.dashboard.queries.sources)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, Q, Sum

from projects.dashboard.queries.ranges import TimeRange, ceil_hour
from projects.dashboard.queries.sources import daily_part, daily_until, hourly_part
from projects.models import DailyRollup, HourlyRollup, PollResult


def mean_response_ms(
    project_id: int, time_range: TimeRange, now: datetime
) -> float | None:
    """The mean response time of the polls that got one; None if none did."""
    start = time_range.start(now)
    boundary = daily_until()
    parts = [(HourlyRollup, hourly_part(start, boundary))]
    days = daily_part(start, boundary)
    if days is not None:
        parts.append((DailyRollup, days))
    responses = total_ms = 0
    for model, part in parts:
        sums = model.objects.filter(part, project_id=project_id).aggregate(
            responses=Sum("responses", default=0),
            total=Sum("response_time_sum_ms", default=0),
        )
        responses += sums["responses"]
        total_ms += sums["total"]
    leading = PollResult.objects.filter(
        Q(polled_at__gte=start, polled_at__lt=ceil_hour(start)),
        project_id=project_id,
    ).aggregate(
        responses=Count("response_time_ms"),
        total=Sum("response_time_ms", default=0),
    )
    responses += leading["responses"]
    total_ms += leading["total"]
    return total_ms / responses if responses else None

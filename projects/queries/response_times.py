"""Response times of one project over a range, in at most ~300 buckets.

The database does the bucketing: each bucket is an integer division of the
poll's epoch seconds, and carries the average and maximum response time and
the number of failed polls.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db.models import Avg, Count, FloatField, Max, Q, QuerySet, Sum
from django.db.models.functions import Cast, NullIf

from projects.models import HourlyRollup, PollResult, Status
from projects.queries.functions import EpochSeconds
from projects.queries.ranges import TimeRange
from projects.rollups import rollup_hour


@dataclass(frozen=True, slots=True)
class Bucket:
    start: datetime
    polls: int
    failures: int
    avg_ms: float | None  # None when no poll got a response
    max_ms: int | None

    @property
    def failure_share(self) -> float:
        return self.failures / self.polls if self.polls else 0.0


def response_time_buckets(
    project_id: int, time_range: TimeRange, now: datetime
) -> list[Bucket]:
    """The range's buckets that hold polls, oldest first."""
    start = time_range.start(now)
    if time_range.from_rollups:
        rows = _from_rollups(project_id, start, time_range.bucket_seconds)
    else:
        rows = _from_polls(project_id, start, time_range.bucket_seconds)
    return [
        Bucket(
            start=datetime.fromtimestamp(row["bucket"], UTC),
            polls=row["polls"],
            failures=row["failures"],
            avg_ms=row["avg_ms"],
            max_ms=row["max_ms"],
        )
        for row in rows
    ]


def _from_polls(project_id: int, start: datetime, width: int) -> QuerySet:
    return (
        PollResult.objects.filter(project_id=project_id, polled_at__gte=start)
        .annotate(bucket=EpochSeconds("polled_at") / width * width)
        .values("bucket")
        .annotate(
            polls=Count("id"),
            failures=Count("id", filter=Q(status=Status.DOWN)),
            avg_ms=Avg("response_time_ms"),
            max_ms=Max("response_time_ms"),
        )
        .order_by("bucket")
    )


def _from_rollups(project_id: int, start: datetime, width: int) -> QuerySet:
    # The first bucket starts at a whole hour, up to an hour before `start`.
    return (
        HourlyRollup.objects.filter(project_id=project_id, hour__gte=rollup_hour(start))
        .annotate(bucket=EpochSeconds("hour") / width * width)
        .values("bucket")
        .annotate(
            polls=Sum("polls"),
            failures=Sum("failures"),
            avg_ms=Cast(Sum("response_time_sum_ms"), FloatField())
            / NullIf(Sum("responses"), 0),
            max_ms=Max("response_time_max_ms"),
        )
        .order_by("bucket")
    )

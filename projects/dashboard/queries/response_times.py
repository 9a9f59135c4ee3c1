"""Response times of one project over a range, in at most ~300 buckets.

The database does the bucketing: each bucket is an integer division of the
poll's epoch seconds, and carries the average and maximum response time and
the number of failed polls. Ranges of whole days add up daily and hourly
rollups (projects.dashboard.queries.sources) bucket by bucket.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db.models import Avg, Count, FloatField, Max, Q, QuerySet, Sum
from django.db.models.functions import Cast, NullIf

from projects.dashboard.queries.functions import EpochSeconds
from projects.dashboard.queries.ranges import TimeRange
from projects.dashboard.queries.sources import daily_part, daily_until, hourly_part
from projects.models import DailyRollup, HourlyRollup, PollResult, Status
from projects.models.results import rollup_hour

# PollResult's phase columns, in the order a poll goes through them.
PHASES = ("dns_ms", "connect_ms", "tls_ms", "first_byte_ms")


@dataclass(frozen=True, slots=True)
class Bucket:
    start: datetime
    polls: int
    failures: int
    avg_ms: float | None  # None when no poll got a response
    max_ms: int | None
    # Average ms per poll with a response spent in each of PHASES (a poll
    # that skipped a phase adds 0). None when the range reads rollups,
    # which keep no phases, or when no poll timed any.
    phases: tuple[float, ...] | None = None
    # Polls that got a response, when read from the polls: merged() weighs
    # the regions' averages by it.
    responses: int = dataclasses.field(default=0, compare=False)

    @property
    def failure_share(self) -> float:
        return self.failures / self.polls if self.polls else 0.0


def response_time_buckets(
    project_id: int, time_range: TimeRange, now: datetime
) -> list[Bucket]:
    """The range's buckets that hold polls, oldest first."""
    start = time_range.start(now)
    if time_range.whole_days:
        rows = _from_days(project_id, start, time_range.bucket_seconds)
    elif time_range.from_rollups:
        rows = _from_rollups(project_id, start, time_range.bucket_seconds)
    else:
        rows = _from_polls(project_id, start, time_range.bucket_seconds)
    return [_bucket(row) for row in rows]


def region_buckets(
    project_id: int, time_range: TimeRange, now: datetime
) -> dict[int, list[Bucket]] | None:
    """Each region's buckets of the range, by region id, in one query;
    None for ranges read from the rollups, which keep no region."""
    if time_range.whole_days or time_range.from_rollups:
        return None
    start, width = time_range.start(now), time_range.bucket_seconds
    series: dict[int, list[Bucket]] = {}
    for row in _from_polls(project_id, start, width, by=("region", "bucket")):
        series.setdefault(row["region"], []).append(_bucket(row))
    return series


def merge_regions(series: dict[int, list[Bucket]]) -> list[Bucket]:
    """The regions' buckets as one series: what response_time_buckets()
    gives for the same polls."""
    sums: dict[datetime, list[Bucket]] = {}
    for buckets in series.values():
        for bucket in buckets:
            sums.setdefault(bucket.start, []).append(bucket)
    return [_merge(sums[start]) for start in sorted(sums)]


def _merge(parts: list[Bucket]) -> Bucket:
    responses = sum(p.responses for p in parts)
    timed = [p for p in parts if p.avg_ms is not None]
    phased = [p for p in parts if p.phases is not None]
    phases = None
    if phased:
        weight = sum(p.responses for p in phased) or 1
        phases = tuple(
            sum(p.phases[i] * p.responses for p in phased) / weight
            for i in range(len(PHASES))
        )
    return Bucket(
        start=parts[0].start,
        polls=sum(p.polls for p in parts),
        failures=sum(p.failures for p in parts),
        avg_ms=sum(p.avg_ms * p.responses for p in timed) / responses
        if timed and responses
        else None,
        max_ms=max((p.max_ms for p in parts if p.max_ms is not None), default=None),
        phases=phases,
        responses=responses,
    )


def _bucket(row: dict) -> Bucket:
    return Bucket(
        start=datetime.fromtimestamp(row["bucket"], UTC),
        polls=row["polls"],
        failures=row["failures"],
        avg_ms=row["avg_ms"],
        max_ms=row["max_ms"],
        phases=_phase_averages(row),
        responses=row.get("responses") or 0,
    )


def _phase_averages(row: dict) -> tuple[float, ...] | None:
    sums = [row.get(f"{phase}_sum") for phase in PHASES]
    if all(total is None for total in sums) or not row.get("responses"):
        return None
    return tuple((total or 0) / row["responses"] for total in sums)


def _from_polls(
    project_id: int, start: datetime, width: int, *, by: tuple[str, ...] = ("bucket",)
) -> QuerySet:
    return (
        PollResult.objects.filter(project_id=project_id, polled_at__gte=start)
        .annotate(bucket=EpochSeconds("polled_at") / width * width)
        .values(*by)
        .annotate(
            polls=Count("polled_at"),
            failures=Count("polled_at", filter=Q(status=Status.DOWN)),
            avg_ms=Avg("response_time_ms"),
            max_ms=Max("response_time_ms"),
            responses=Count("response_time_ms"),
            **{f"{phase}_sum": Sum(phase) for phase in PHASES},
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


def _from_days(project_id: int, start: datetime, width: int) -> list[dict]:
    boundary = daily_until()
    parts = [(HourlyRollup, "hour", hourly_part(start, boundary))]
    days = daily_part(start, boundary)
    if days is not None:
        parts.append((DailyRollup, "day", days))
    merged: dict[int, dict] = {}
    for model, field, part in parts:
        rows = model.objects.filter(part, project_id=project_id)
        for row in _bucket_sums(rows, field, width):
            _add(merged.setdefault(row["bucket"], _empty(row["bucket"])), row)
    return [_averaged(merged[bucket]) for bucket in sorted(merged)]


def _bucket_sums(rows: QuerySet, field: str, width: int) -> QuerySet:
    return (
        rows.annotate(bucket=EpochSeconds(field) / width * width)
        .values("bucket")
        .annotate(
            polls=Sum("polls"),
            failures=Sum("failures"),
            responses=Sum("responses"),
            total_ms=Sum("response_time_sum_ms"),
            max_ms=Max("response_time_max_ms"),
        )
        .order_by()
    )


def _empty(bucket: int) -> dict:
    return {
        "bucket": bucket,
        "polls": 0,
        "failures": 0,
        "responses": 0,
        "total_ms": 0,
        "max_ms": None,
    }


def _add(bucket: dict, row: dict) -> None:
    for name in ("polls", "failures", "responses", "total_ms"):
        bucket[name] += row[name]
    maxima = [m for m in (bucket["max_ms"], row["max_ms"]) if m is not None]
    bucket["max_ms"] = max(maxima, default=None)


def _averaged(bucket: dict) -> dict:
    responses = bucket["responses"]
    return {**bucket, "avg_ms": bucket["total_ms"] / responses if responses else None}

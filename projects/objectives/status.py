"""An objective's numbers now: its polls over its window and over the
burn-rate windows, read from the rollups (projects/latency/ranges.py)."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Q

from projects.latency import histogram
from projects.latency.ranges import RangeSums, range_sums
from projects.models import Project, ServiceLevelObjective
from projects.objectives import budget
from projects.objectives.budget import Counts

HOUR = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class ObjectiveStatus:
    window_start: datetime
    window: timedelta  # the whole window's length (a calendar month's too)
    counts: Counts
    attainment_percent: float | None
    error_budget_remaining_percent: float
    error_budget_minutes: float
    error_budget_remaining_minutes: float
    burn_rate_1h: float | None
    # When the budget runs out at the last hour's burn rate; None when
    # nothing burns.
    budget_exhausted_at: datetime | None


def window_of(objective: ServiceLevelObjective, now: datetime):
    """(start, whole length) of the objective's window at `now`."""
    if objective.calendar_month:
        now = now.astimezone(UTC)
        start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        days = calendar.monthrange(now.year, now.month)[1]
        return start, timedelta(days=days)
    length = timedelta(days=objective.window_days)
    return now - length, length


def project_ids(objective: ServiceLevelObjective) -> list[int]:
    """The projects whose polls the objective counts: its project, its
    tag's, or its status-page section's (chosen there or by the section's
    tag), as the page shows them."""
    if objective.project_id is not None:
        return [objective.project_id]
    if objective.tag_id is not None:
        members = Q(tags=objective.tag_id)
    else:
        section = objective.section
        members = Q(status_sections=section.pk)
        if section.tag_id is not None:
            members |= Q(tags=section.tag_id)
    return list(Project.objects.filter(members).distinct().values_list("pk", flat=True))


def counts_since(
    objective: ServiceLevelObjective,
    ids: list[int],
    start: datetime,
    end: datetime | None = None,
) -> Counts:
    """The objective's good and counted polls from `start` to `end` (now
    when None)."""
    good = total = 0
    for sums in range_sums(ids, start, end).values():
        g, t = _good_and_total(objective, sums)
        good, total = good + g, total + t
    return Counts(good, total)


def _good_and_total(objective: ServiceLevelObjective, sums: RangeSums):
    if objective.kind == ServiceLevelObjective.Kind.LATENCY:
        # Polls that got a response; good: in a bucket whose middle is
        # within the threshold (so within 4 % of it).
        total = good = 0
        for key, count in sums.histogram.items():
            total += count
            if histogram.bucket_value(key) <= objective.threshold_ms:
                good += count
        return good, total
    total, bad = sums.polls, sums.failures
    if objective.exclude_maintenance:
        total -= sums.maintenance_polls
        bad -= sums.maintenance_failures
    return total - bad, total


def objective_status(
    objective: ServiceLevelObjective, now: datetime
) -> ObjectiveStatus:
    ids = project_ids(objective)
    start, window = window_of(objective, now)
    counts = counts_since(objective, ids, start)
    target = objective.target_percent
    remaining = budget.budget_remaining_percent(counts, target)
    rate = budget.burn_rate(counts_since(objective, ids, now - HOUR), target)
    left = budget.time_left(remaining, rate, window)
    minutes = budget.budget_minutes(target, window)
    return ObjectiveStatus(
        window_start=start,
        window=window,
        counts=counts,
        attainment_percent=budget.attainment_percent(counts),
        error_budget_remaining_percent=remaining,
        error_budget_minutes=minutes,
        error_budget_remaining_minutes=minutes * remaining / 100,
        burn_rate_1h=rate,
        budget_exhausted_at=None if left is None else now + left,
    )

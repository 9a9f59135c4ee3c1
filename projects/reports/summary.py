"""One report: what some projects' polls and downtime incidents add up to
over [start, end), read from the rollups and the incidents."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.db.models import Q

from projects.latency import histogram
from projects.latency.ranges import range_sums
from projects.models import Incident, ServiceLevelObjective
from projects.objectives import budget
from projects.objectives.status import counts_since, project_ids


@dataclass(frozen=True, slots=True)
class IncidentLine:
    project: str
    started_at: datetime
    resolved_at: datetime | None
    duration_seconds: float  # within the range


@dataclass
class Report:
    start: datetime
    end: datetime
    projects: int
    polls: int
    failures: int
    uptime_percent: float | None
    downtime_minutes: float
    mttr_seconds: float | None
    mtbf_seconds: float | None
    p95_ms: int | None
    incidents: list[IncidentLine] = field(default_factory=list)
    objectives: list[dict] = field(default_factory=list)


def last_calendar_month(now: datetime) -> tuple[datetime, datetime]:
    """[first of last month, first of this month), UTC: the default range."""
    now = now.astimezone(UTC)
    end = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    start = (end - timedelta(days=1)).replace(day=1)
    return start, end


def build_report(ids: list[int], start: datetime, end: datetime) -> Report:
    sums = range_sums(ids, start, end).values()
    polls = sum(s.polls - s.maintenance_polls for s in sums)
    failures = sum(s.failures - s.maintenance_failures for s in sums)
    lines = _incidents(ids, start, end)
    downtime = sum(line.duration_seconds for line in lines)
    resolved = [
        (line.resolved_at - line.started_at).total_seconds()
        for line in lines
        if line.resolved_at is not None and line.resolved_at <= end
    ]
    observed = (end - start).total_seconds() * len(ids)
    return Report(
        start=start,
        end=end,
        projects=len(ids),
        polls=polls,
        failures=failures,
        uptime_percent=100 * (polls - failures) / polls if polls else None,
        downtime_minutes=downtime / 60,
        mttr_seconds=sum(resolved) / len(resolved) if resolved else None,
        mtbf_seconds=(observed - downtime) / len(lines) if lines else None,
        p95_ms=histogram.percentile(histogram.merged(s.histogram for s in sums), 95),
        incidents=lines,
        objectives=_objectives(ids, start, end),
    )


def _incidents(ids: list[int], start: datetime, end: datetime) -> list:
    """Downtime incidents that overlap the range, each with its time
    within it."""
    incidents = (
        Incident.objects.filter(
            project_id__in=ids, kind=Incident.Kind.DOWNTIME, started_at__lt=end
        )
        .filter(Q(resolved_at__isnull=True) | Q(resolved_at__gt=start))
        .select_related("project")
        .order_by("started_at")
    )
    return [
        IncidentLine(
            project=i.project.name,
            started_at=i.started_at,
            resolved_at=i.resolved_at,
            duration_seconds=(
                min(i.resolved_at or end, end) - max(i.started_at, start)
            ).total_seconds(),
        )
        for i in incidents
    ]


def _objectives(ids: list[int], start: datetime, end: datetime) -> list[dict]:
    """Each objective on these projects (or on a tag or a status-page
    section of one of them), its attainment over the report's range."""
    objectives = ServiceLevelObjective.objects.filter(
        Q(project_id__in=ids)
        | Q(tag__projects__in=ids)
        | Q(section__projects__in=ids)
        | Q(section__tag__projects__in=ids)
    ).distinct()
    found = []
    for objective in objectives.order_by("name"):
        counts = counts_since(objective, project_ids(objective), start, end)
        found.append(
            {
                "name": objective.name,
                "target_percent": objective.target_percent,
                "attainment_percent": budget.attainment_percent(counts),
                "met": counts.total == 0
                or counts.good * 100 >= objective.target_percent * counts.total,
            }
        )
    return found

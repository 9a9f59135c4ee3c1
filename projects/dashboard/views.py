"""The dashboard: every project at a glance, and one project in depth.

Both pages are read-only and cost a fixed number of queries however many
projects or polls there are; the queries live in projects.dashboard.queries.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.gzip import gzip_page

from projects.dashboard.banners import monitor_banners, setup_hints
from projects.dashboard.heartbeats import heartbeat_detail
from projects.dashboard.params import positive_int
from projects.dashboard.queries.certificates import expiring_soon
from projects.dashboard.queries.deliveries import DELIVERIES_SHOWN, recent_deliveries
from projects.dashboard.queries.domains import watched_registration
from projects.dashboard.queries.flow_steps import flow_view
from projects.dashboard.queries.history import poll_history
from projects.dashboard.queries.incidents import project_incidents
from projects.dashboard.queries.objectives import objective_rows
from projects.dashboard.queries.outages import OUTAGES_SHOWN, recent_outages
from projects.dashboard.queries.overview import (
    State,
    project_list,
    state_counts,
    with_state,
)
from projects.dashboard.queries.percentiles import percentile_points
from projects.dashboard.queries.ranges import (
    DEFAULT_RANGE,
    OVERVIEW_RANGES,
    RANGES,
    TimeRange,
)
from projects.dashboard.queries.recent_polls import latest_polls
from projects.dashboard.queries.regions import (
    RegionRow,
    add_region_dots,
    name_regions,
    project_regions,
    regions_seen,
)
from projects.dashboard.queries.response_times import (
    Bucket,
    merge_regions,
    region_buckets,
    response_time_buckets,
)
from projects.dashboard.queries.uptime import Uptime, maintenance_for, uptime_by_project
from projects.latency.ranges import range_sums
from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import PollResult, Project, Status
from projects.teams.scoping import current_team, for_team

PROJECTS_PER_PAGE = 50
# The overview shows the objectives closest to missing; their page has all.
OBJECTIVES_SHOWN = 5


# Both pages reload every 30 seconds; the overview's recent-poll strips
# compress about tenfold.
@login_required
@gzip_page
def overview(request: HttpRequest) -> HttpResponse:
    search = request.GET.get("q", "").strip()
    state = request.GET.get("state", "")
    tag = request.GET.get("tag", "").strip()
    now = timezone.now()
    maintenance = maintenance_for(OVERVIEW_RANGES, now)
    maintained = maintenance.covered_projects(now)
    team = current_team(request)
    projects = project_list(
        team=team, search=search, state=state, tag=tag, maintained=maintained
    ).annotate(regions_seen=regions_seen())
    page = Paginator(projects, PROJECTS_PER_PAGE).get_page(request.GET.get("page"))
    _add_uptime_and_recent_polls(page.object_list, now, maintenance)
    add_region_dots(page.object_list, now)
    counts = state_counts(team=team, maintained=maintained, tag=tag)
    expiring = expiring_soon(team)
    objectives = objective_rows(team, now)
    context = {
        "page": page,
        "counts": [(s.value, s.label, counts[s]) for s in State],
        "down_count": counts[State.DOWN],
        "search": search,
        "state": state,
        "tag": tag,
        "ranges": OVERVIEW_RANGES,
        "banners": monitor_banners(),
        "hints": setup_hints(team=team, has_projects=any(counts.values())),
        "certificates": expiring.certificates,
        "domains": expiring.domains,
        "objectives": objectives[:OBJECTIVES_SHOWN],
        "objectives_count": len(objectives),
        "now": now,
    }
    return render(request, "projects/overview.html", context)


def _add_uptime_and_recent_polls(
    projects: list[Project], now: datetime, maintenance: MaintenanceSchedule
) -> None:
    ids = [project.pk for project in projects]
    uptimes = uptime_by_project(ids, OVERVIEW_RANGES, now, maintenance=maintenance)
    strips = latest_polls(ids)
    for project in projects:
        project.uptimes = [(r, uptimes[project.pk][r.key]) for r in OVERVIEW_RANGES]
        project.recent_polls = strips[project.pk]


@login_required
@gzip_page
def project_detail(request: HttpRequest, pk: int) -> HttpResponse:
    now = timezone.now()
    maintenance = maintenance_for(RANGES.values(), now)
    maintained = maintenance.covered_projects(now)
    team = current_team(request)
    team_projects = for_team(Project.objects.all(), team)
    projects = with_state(team_projects, maintained=maintained)
    projects = projects.annotate(regions_seen=regions_seen())
    project = get_object_or_404(projects.prefetch_related("tags"), pk=pk)
    if project.is_heartbeat:
        return heartbeat_detail(
            request, project, now=now, maintenance=maintenance, team=team
        )
    time_range = RANGES.get(request.GET.get("range", ""), opening_range(project, now))
    status = request.GET.get("status", "")
    if status not in Status.values:
        status = ""
    since = time_range.start(now)
    uptimes = uptime_by_project([pk], RANGES.values(), now, maintenance=maintenance)
    uptimes = uptimes[pk]
    before = positive_int(request.GET, "before")
    regions = project_regions(pk, now) if project.regions_seen > 1 else []
    # With several regions the rollups count the project's verdict, not
    # each region's failed polls (docs/regions.md): no shortcut from them.
    counts = None if regions else uptimes[time_range.key]
    history, next_before = _history(pk, since, status, before, counts)
    name_regions(history, regions)
    buckets, region_series = _chart(pk, time_range, now, regions)
    context = {
        "project": project,
        "range": time_range,
        "ranges": RANGES.values(),
        "uptimes": [(r, uptimes[r.key]) for r in RANGES.values()],
        "percentiles": range_sums([pk], since)[pk].percentiles(),
        "buckets": buckets,
        "region_series": region_series,
        "percentile_points": percentile_points(pk, time_range, now),
        "outages": recent_outages(pk, since=since),
        "polls_kept_from": _polls_kept_from(since, now),
        "polls_kept_days": settings.RESULT_RETENTION_DAYS,
        "outages_shown": OUTAGES_SHOWN,
        "history": history,
        "before": before,
        "next_before": next_before,
        "status": status,
        "statuses": Status,
        "now": now,
        "deliveries": recent_deliveries(pk),
        "deliveries_shown": DELIVERIES_SHOWN,
        "incidents": project_incidents(pk, team=team),
        "banners": monitor_banners(now),
        "regions": regions,
        "flow": flow_view(pk) if project.is_flow else None,
        "registration": watched_registration(project),
    }
    return render(request, "projects/project_detail.html", context)


def opening_range(project: Project, now: datetime) -> TimeRange:
    """The range a project's page opens on: 1 h for a project younger than
    a day (a 24 h chart of a new one is one pixel of data), else 24 h."""
    if project.created_at and now - project.created_at < timedelta(days=1):
        return RANGES["1h"]
    return DEFAULT_RANGE


def _chart(
    pk: int, time_range: TimeRange, now: datetime, regions: list[RegionRow]
) -> tuple[list[Bucket], list[tuple[str, list[Bucket]]]]:
    """The chart's buckets, and each region's (name, buckets) when the page
    shows regions and the range is read from the polls; one query either
    way."""
    per_region = region_buckets(pk, time_range, now) if regions else None
    if per_region is None:
        return response_time_buckets(pk, time_range, now), []
    # In the regions table's order; a region with polls but no view yet
    # (its first seconds) goes last.
    rank = {row.region_id: place for place, row in enumerate(regions)}
    names = {row.region_id: row.name for row in regions}
    ids = sorted(per_region, key=lambda r: rank.get(r, len(rank) + r))
    series = [(names.get(r, f"region {r}"), per_region[r]) for r in ids]
    return merge_regions(per_region), series


def _history(
    pk: int, since: datetime, status: str, before: int | None, uptime: Uptime | None
) -> tuple[list[PollResult], int | None]:
    # The range's counts already say when a filter matches nothing; asking
    # anyway would scan every poll of the range for a match.
    if uptime is None:
        return poll_history(pk, since=since, status=status, before=before)
    up_polls = uptime.polls - uptime.failures
    if (status == Status.UP and not up_polls) or (
        status == Status.DOWN and not uptime.failures
    ):
        return [], None
    return poll_history(pk, since=since, status=status, before=before)


def _polls_kept_from(since: datetime, now: datetime) -> datetime | None:
    """When the oldest poll still kept was made, if retention has removed
    polls from the range; None when the range's polls are all there."""
    days = settings.RESULT_RETENTION_DAYS
    kept_from = now - timedelta(days=days)
    return kept_from if days and since < kept_from else None

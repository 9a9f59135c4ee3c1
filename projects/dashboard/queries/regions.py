"""A project's view from each region (docs/regions.md): its latest poll
there, and whether that region's view counts now."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from projects.models import PollResult, ProjectRegionState, Status


@dataclass(frozen=True, slots=True)
class RegionRow:
    region_id: int
    name: str
    state: str  # the region's own streak: up, pending or down
    polled_at: datetime | None
    up: bool | None
    status_code: int | None
    response_time_ms: int | None
    phases: str
    error: str
    live: bool
    blind: bool


def regions_seen() -> Subquery:
    """How many regions have polled the project, as an annotation: the page
    asks for more only when there are several, so a single-region install
    pays no query for it."""
    states = (
        ProjectRegionState.objects.filter(project=OuterRef("pk"))
        .order_by()
        .values("project")
        .annotate(count=Count("pk"))
        .values("count")
    )
    return Coalesce(Subquery(states), 0)


def project_regions(project_id: int, now: datetime) -> list[RegionRow]:
    """One row per region that has polled the project, by name; empty
    when fewer than two have (a single-region install shows nothing)."""
    states = list(
        ProjectRegionState.objects.filter(project_id=project_id)
        .select_related("region")
        .order_by("region__name")
    )
    if len(states) < 2:
        return []
    live_since = now - timedelta(seconds=settings.POLLER_SILENT_SECONDS)
    latest = _latest_polls(project_id, states)
    rows = []
    for state in states:
        poll = latest.get(state.region_id)
        region = state.region
        rows.append(
            RegionRow(
                region_id=region.pk,
                name=region.label or region.name,
                state=state.state or "up",
                polled_at=poll.polled_at if poll else state.last_polled_at,
                up=poll.status == Status.UP if poll else state.last_up,
                status_code=poll.status_code if poll else state.last_status_code,
                response_time_ms=poll.response_time_ms
                if poll
                else state.last_response_time_ms,
                phases=poll.phases_text if poll else "",
                error=_error(poll, state),
                live=region.last_seen_at is not None
                and region.last_seen_at >= live_since,
                blind=region.blind_since is not None,
            )
        )
    return rows


def _latest_polls(
    project_id: int, states: list[ProjectRegionState]
) -> dict[int, PollResult]:
    """Each region's latest poll of the project, in one query: at or after
    its view's last_polled_at, which a settled view writes only every few
    minutes (projects/incidents/region_rows.py)."""
    since = Q()
    for state in states:
        if state.last_polled_at is not None:
            since |= Q(region_id=state.region_id, polled_at__gte=state.last_polled_at)
    if not since:
        return {}
    latest: dict[int, PollResult] = {}
    for poll in PollResult.objects.filter(since, project_id=project_id):
        seen = latest.get(poll.region_id)
        if seen is None or poll.polled_at > seen.polled_at:
            latest[poll.region_id] = poll
    return latest


def _error(poll: PollResult | None, state: ProjectRegionState) -> str:
    if poll is None:
        return state.last_error if state.last_up is False else ""
    return poll.error_message if poll.status != Status.UP else ""


@dataclass(frozen=True, slots=True)
class RegionDot:
    """One region's view of a project, for the overview's dots."""

    name: str
    state: str  # up, pending or down
    counts: bool  # a live poller, not blind

    @property
    def text(self) -> str:
        """What the dot says, for its tooltip and screen readers."""
        return f"{self.name}: {self.state}" + ("" if self.counts else ", not counted")


def add_region_dots(projects: list, now: datetime) -> None:
    """Give each project (annotated with regions_seen()) its regions' dots
    (`region_dots`), in name order; empty unless several regions polled it,
    so a single-region install asks nothing more and looks as it did. One
    query for the whole page."""
    several = [p.pk for p in projects if p.regions_seen > 1]
    dots: dict[int, list[RegionDot]] = {}
    if several:
        live_since = now - timedelta(seconds=settings.POLLER_SILENT_SECONDS)
        states = (
            ProjectRegionState.objects.filter(project_id__in=several)
            .select_related("region")
            .order_by("region__name")
        )
        for state in states:
            region = state.region
            live = region.last_seen_at is not None and region.last_seen_at >= live_since
            dots.setdefault(state.project_id, []).append(
                RegionDot(
                    region.label or region.name,
                    state.state or "up",
                    live and region.blind_since is None,
                )
            )
    for project in projects:
        project.region_dots = dots.get(project.pk, [])


def name_regions(polls: list[PollResult], regions: list[RegionRow]) -> None:
    """Give each poll its region's name (`region_name`) for the history
    table, when the page shows regions."""
    if not regions:
        return
    names = {row.region_id: row.name for row in regions}
    for poll in polls:
        poll.region_name = names.get(poll.region_id, "")

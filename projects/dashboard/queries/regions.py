"""A project's view from each region (docs/regions.md): its latest poll
there, and whether that region's view counts now."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce

from projects.models import PollResult, ProjectRegionState


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
    latest = {
        (r.region_id, r.polled_at): r
        for r in PollResult.objects.filter(
            project_id=project_id,
            polled_at__in=[s.last_polled_at for s in states if s.last_polled_at],
        )
    }
    rows = []
    for state in states:
        poll = latest.get((state.region_id, state.last_polled_at))
        region = state.region
        rows.append(
            RegionRow(
                region_id=region.pk,
                name=region.label or region.name,
                state=state.state or "up",
                polled_at=state.last_polled_at,
                up=state.last_up,
                status_code=state.last_status_code,
                response_time_ms=state.last_response_time_ms,
                phases=poll.phases_text if poll else "",
                error=state.last_error if state.last_up is False else "",
                live=region.last_seen_at is not None
                and region.last_seen_at >= live_since,
                blind=region.blind_since is not None,
            )
        )
    return rows


def name_regions(polls: list[PollResult], regions: list[RegionRow]) -> None:
    """Give each poll its region's name (`region_name`) for the history
    table, when the page shows regions."""
    if not regions:
        return
    names = {row.region_id: row.name for row in regions}
    for poll in polls:
        poll.region_name = names.get(poll.region_id, "")

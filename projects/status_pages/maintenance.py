"""Active and upcoming maintenance windows of a page's projects. Two
queries: the windows, and which projects each one covers."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q, QuerySet

from projects.models import MaintenanceWindow

# How far ahead a page announces maintenance.
UPCOMING = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class MaintenanceView:
    name: str
    starts_at: datetime
    ends_at: datetime
    active: bool


def page_maintenance(
    project_ids: Iterable[int] | QuerySet, now: datetime
) -> tuple[list[MaintenanceView], set[int] | None]:
    """The windows' spans overlapping [now, now + UPCOMING), soonest
    first, and the page's projects under maintenance now (None: all)."""
    windows = list(
        MaintenanceWindow.objects.filter(enabled=True)
        .filter(Q(all_projects=True) | Q(projects__in=project_ids))
        .distinct()
    )
    members = _members([w.pk for w in windows if not w.all_projects], project_ids)
    views, covered = [], set()
    everywhere = False
    for window in windows:
        for start, end in window.occurrences(now, now + UPCOMING):
            active = start <= now < end
            views.append(MaintenanceView(window.name, start, end, active))
            if active:
                everywhere |= window.all_projects
                covered |= members[window.pk]
    views.sort(key=lambda v: (v.starts_at, v.name))
    return views, None if everywhere else covered


def _members(
    window_ids: list[int], project_ids: Iterable[int] | QuerySet
) -> dict[int, set[int]]:
    found: dict[int, set[int]] = defaultdict(set)
    if window_ids:
        links = MaintenanceWindow.projects.through.objects.filter(
            maintenancewindow_id__in=window_ids, project_id__in=project_ids
        )
        for window, project in links.values_list("maintenancewindow_id", "project_id"):
            found[window].add(project)
    return found

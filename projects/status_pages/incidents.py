"""A status page's incidents: open ones with their timeline, and past
ones of the last show_uptime_days with their duration. Two queries."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Q, QuerySet
from django.utils.safestring import SafeString

from projects.models import Incident, StatusPage, StatusUpdate
from projects.notifications.markdown import render_markdown
from projects.notifications.messages import duration_text

# A page lists at most this many past incidents, newest first.
MAX_PAST_INCIDENTS = 50
SHOWN_KINDS = (Incident.Kind.DOWNTIME, Incident.Kind.MANUAL)


@dataclass(slots=True)
class UpdateView:
    status: str
    status_label: str
    html: SafeString
    created_at: datetime


@dataclass(slots=True)
class IncidentView:
    pk: int
    project_id: int
    title: str
    manual: bool
    started_at: datetime
    resolved_at: datetime | None
    duration: str
    updates: list[UpdateView] = field(default_factory=list)


@dataclass(slots=True)
class PageIncidents:
    open: list[IncidentView]
    past: list[IncidentView]


def page_incidents(
    page: StatusPage,
    projects: dict[int, dict],
    now: datetime,
    *,
    project_ids: Iterable[int] | QuerySet | None = None,
) -> PageIncidents:
    """`projects` by id, with their names; `project_ids`, the same ids as a
    subquery, is cheaper to send than a long list."""
    since = now - timedelta(days=page.show_uptime_days)
    if project_ids is None:
        project_ids = list(projects)
    rows = list(
        Incident.objects.filter(project_id__in=project_ids, kind__in=SHOWN_KINDS)
        .filter(Q(resolved_at__isnull=True) | Q(started_at__gte=since))
        .order_by("-started_at", "-id")
        .values("id", "project_id", "kind", "title", "started_at", "resolved_at")[
            : MAX_PAST_INCIDENTS + len(projects) + 10
        ]
    )
    updates = updates_of([row["id"] for row in rows])
    views = [
        view(row, projects[row["project_id"]]["name"], updates[row["id"]], now)
        for row in rows
        # A project added to the page since `projects` was read waits
        # for the next build.
        if row["project_id"] in projects
        and (
            row["kind"] == Incident.Kind.MANUAL
            or updates[row["id"]]
            or not page.incidents_need_update
        )
    ]
    return PageIncidents(
        open=[v for v in views if v.resolved_at is None],
        past=[v for v in views if v.resolved_at is not None][:MAX_PAST_INCIDENTS],
    )


def updates_of(incident_ids: list[int]) -> dict[int, list[UpdateView]]:
    found: dict[int, list[UpdateView]] = defaultdict(list)
    rows = StatusUpdate.objects.filter(incident_id__in=incident_ids).values(
        "incident_id", "status", "message", "created_at"
    )
    labels = dict(StatusUpdate.Status.choices)
    for row in rows.order_by("-created_at", "-id"):
        found[row["incident_id"]].append(
            UpdateView(
                status=row["status"],
                status_label=labels.get(row["status"], row["status"]),
                html=render_markdown(row["message"]),
                created_at=row["created_at"],
            )
        )
    return found


def view(row: dict, project_name: str, updates: list[UpdateView], now) -> IncidentView:
    manual = row["kind"] == Incident.Kind.MANUAL
    resolved = row["resolved_at"]
    if manual:
        title = row["title"] or f"Incident on {project_name}"
    else:
        title = f"{project_name} {'was' if resolved else 'is'} down"
    seconds = ((resolved or now) - row["started_at"]).total_seconds()
    return IncidentView(
        pk=row["id"],
        project_id=row["project_id"],
        title=title,
        manual=manual,
        started_at=row["started_at"],
        resolved_at=resolved,
        duration=duration_text(max(0, seconds)),
        updates=updates,
    )

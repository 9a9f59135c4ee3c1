"""Incidents for the pages: open ones first, then the most recent."""

from __future__ import annotations

from django.db.models import Case, Count, Q, QuerySet, Value, When

from projects.models import Incident, Notification, Team
from projects.teams.scoping import for_team

PROJECT_INCIDENTS_SHOWN = 20


def incident_list(
    *, team: Team | None, project_id: int | None = None
) -> QuerySet[Incident]:
    """The team's incidents with their project, who acknowledged them, and how many
    notifications were queued (`notified`) and delivered (`delivered`)."""
    incidents = for_team(Incident.objects.all(), team)
    incidents = incidents.select_related("project", "acknowledged_by").annotate(
        notified=Count("notifications"),
        delivered=Count(
            "notifications",
            filter=Q(notifications__state=Notification.State.DELIVERED),
        ),
    )
    if project_id is not None:
        incidents = incidents.filter(project_id=project_id)
    open_first = Case(When(resolved_at__isnull=True, then=Value(0)), default=Value(1))
    return incidents.order_by(open_first, "-started_at", "-id")


def project_incidents(project_id: int, *, team: Team | None) -> list[Incident]:
    """One of the team's projects' latest incidents, open first."""
    incidents = incident_list(team=team, project_id=project_id)
    return list(incidents[:PROJECT_INCIDENTS_SHOWN])

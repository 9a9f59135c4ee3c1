"""Incidents for the pages: open ones first, then the most recent."""

from __future__ import annotations

from django.db.models import Case, Count, Q, QuerySet, Value, When

from projects.models import Incident, Notification

PROJECT_INCIDENTS_SHOWN = 20


def incident_list(*, project_id: int | None = None) -> QuerySet[Incident]:
    """Incidents with their project, who acknowledged them, and how many
    notifications were queued (`notified`) and delivered (`delivered`)."""
    incidents = Incident.objects.select_related("project", "acknowledged_by").annotate(
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


def project_incidents(project_id: int) -> list[Incident]:
    """One project's latest incidents, open first."""
    return list(incident_list(project_id=project_id)[:PROJECT_INCIDENTS_SHOWN])

"""What happened on a status page, as a list of events: an incident
opened, each update about it, its end, and maintenance announced.

The Atom feed (projects.status_pages.feeds) lists them, and the
announcer (projects.status_announcements) queues the same events for the
page's subscribers; each event's `key` names it once, so the outbox never
queues one twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q

from projects.models import (
    Incident,
    MaintenanceWindow,
    Project,
    StatusPage,
    StatusUpdate,
)

SHOWN_KINDS = (Incident.Kind.DOWNTIME, Incident.Kind.MANUAL)
# How far ahead maintenance is announced.
MAINTENANCE_NOTICE = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class Event:
    key: str  # "incident.opened:42", "incident.update:17", "maintenance:5:<start>"
    kind: str  # incident.opened, incident.update, incident.resolved, maintenance
    title: str
    text: str  # Markdown for updates, plain text otherwise
    at: datetime
    incident_id: int | None = None
    project_id: int | None = None


def page_project_ids(page: StatusPage) -> list[int]:
    """The page's projects, chosen in a section or by a section's tag."""
    return list(
        Project.objects.filter(
            Q(status_sections__page=page) | Q(tags__status_sections__page=page)
        )
        .values_list("id", flat=True)
        .distinct()
    )


def page_events(page: StatusPage, since: datetime, now: datetime) -> list[Event]:
    """The page's events since `since` (and maintenance starting within
    MAINTENANCE_NOTICE of now), newest first."""
    ids = page_project_ids(page)
    events = incident_events(page, ids, since) + maintenance_events(ids, now)
    return sorted(events, key=lambda e: (e.at, e.key), reverse=True)


def incident_events(page: StatusPage, ids: list[int], since: datetime) -> list[Event]:
    incidents = list(
        Incident.objects.filter(project_id__in=ids, kind__in=SHOWN_KINDS)
        .filter(Q(resolved_at__isnull=True) | Q(started_at__gte=since))
        .select_related("project")
    )
    updates = list(
        StatusUpdate.objects.filter(incident__in=incidents).order_by("created_at", "id")
    )
    updated = {u.incident_id for u in updates}
    by_id = {i.pk: i for i in incidents}
    events = []
    for incident in incidents:
        shown = (
            incident.kind == Incident.Kind.MANUAL
            or incident.pk in updated
            or not page.incidents_need_update
        )
        if shown:
            events += _incident_events(incident)
    for update in updates:
        incident = by_id[update.incident_id]
        if update.created_at >= since:
            events.append(
                Event(
                    key=f"incident.update:{update.pk}",
                    kind="incident.update",
                    title=f"{update.get_status_display()}: {incident_title(incident)}",
                    text=update.message,
                    at=update.created_at,
                    incident_id=incident.pk,
                    project_id=incident.project_id,
                )
            )
    return [e for e in events if e.at >= since]


def _incident_events(incident: Incident) -> list[Event]:
    title = incident_title(incident)
    found = [
        Event(
            key=f"incident.opened:{incident.pk}",
            kind="incident.opened",
            title=f"Incident: {title}",
            text=f"Started {incident.started_at:%Y-%m-%d %H:%M} UTC.",
            at=incident.started_at,
            incident_id=incident.pk,
            project_id=incident.project_id,
        )
    ]
    if incident.resolved_at:
        found.append(
            Event(
                key=f"incident.resolved:{incident.pk}",
                kind="incident.resolved",
                title=f"Resolved: {title}",
                text=f"Resolved {incident.resolved_at:%Y-%m-%d %H:%M} UTC.",
                at=incident.resolved_at,
                incident_id=incident.pk,
                project_id=incident.project_id,
            )
        )
    return found


def incident_title(incident: Incident) -> str:
    if incident.kind == Incident.Kind.MANUAL and incident.title:
        return incident.title
    return f"{incident.project.name} is down"


def maintenance_events(ids: list[int], now: datetime) -> list[Event]:
    windows = (
        MaintenanceWindow.objects.filter(enabled=True)
        .filter(Q(all_projects=True) | Q(projects__in=ids))
        .distinct()
    )
    events = []
    for window in windows:
        for start, end in window.occurrences(now, now + MAINTENANCE_NOTICE):
            events.append(
                Event(
                    key=f"maintenance:{window.pk}:{start:%Y%m%dT%H%M}",
                    kind="maintenance",
                    title=f"Maintenance: {window.name}",
                    text=f"From {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC.",
                    at=min(window.updated_at, start),
                )
            )
    return events

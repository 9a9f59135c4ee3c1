"""What happened on a status page, as a list of events: an incident
opened, each update about it, its end, and maintenance announced.

The Atom feed (projects.status_pages.feeds) lists them (page_events),
and the announcer (projects.announcements.announcer) queues the same events
for the page's subscribers as they appear (page_news); each event's `key`
names it once, so the outbox never queues one twice.
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


def page_news(page: StatusPage, since: datetime, until: datetime) -> list[Event]:
    """The page's events that appeared in (since, until]: of the incidents
    opened, saved or resolved then (their updated_at) or updated then (a
    StatusUpdate's created_at), and of maintenance that came within
    MAINTENANCE_NOTICE then or was saved then. What appeared earlier is not
    read again, so the work follows what is new, not what is recent.
    Oldest first."""
    ids = page_project_ids(page)
    updates = list(
        StatusUpdate.objects.filter(
            incident__project_id__in=ids,
            incident__kind__in=SHOWN_KINDS,
            created_at__gt=since,
            created_at__lte=until,
        )
    )
    incidents = list(
        Incident.objects.filter(project_id__in=ids, kind__in=SHOWN_KINDS)
        .filter(
            Q(updated_at__gt=since, updated_at__lte=until)
            | Q(pk__in={u.incident_id for u in updates})
        )
        .select_related("project")
    )
    updated = {u.incident_id for u in updates}
    earlier = _updated_before(page, incidents, since)
    news = [
        i
        for i in incidents
        if since < i.updated_at <= until
        or (page.incidents_need_update and i.pk in updated - earlier)
    ]
    by_id = {i.pk: i for i in incidents}
    shown = updated | earlier
    events = [
        event
        for incident in news
        if _shown(page, incident, shown)
        for event in _incident_events(incident)
    ]
    events += [_update_event(u, by_id[u.incident_id]) for u in updates]
    events += _maintenance_news(ids, since, until)
    return sorted(events, key=lambda e: (e.at, e.key))


def _updated_before(
    page: StatusPage, incidents: list[Incident], since: datetime
) -> set[int]:
    """Which of these incidents had an update by `since`: on a page that
    shows incidents once updated, the first update is what makes the
    opening news."""
    if not page.incidents_need_update:
        return set()
    return set(
        StatusUpdate.objects.filter(
            incident__in=incidents, created_at__lte=since
        ).values_list("incident_id", flat=True)
    )


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
    events = _timeline(page, incidents, updates, updated)
    return [e for e in events if e.at >= since]


def _timeline(
    page: StatusPage,
    incidents: list[Incident],
    updates: list[StatusUpdate],
    updated: set[int],
) -> list[Event]:
    """The events of these incidents (those the page shows: `updated`
    names the ones with an update) and of these updates about them."""
    by_id = {i.pk: i for i in incidents}
    events = []
    for incident in incidents:
        if _shown(page, incident, updated):
            events += _incident_events(incident)
    return events + [_update_event(u, by_id[u.incident_id]) for u in updates]


def _shown(page: StatusPage, incident: Incident, updated: set[int]) -> bool:
    return (
        incident.kind == Incident.Kind.MANUAL
        or incident.pk in updated
        or not page.incidents_need_update
    )


def _update_event(update: StatusUpdate, incident: Incident) -> Event:
    return Event(
        key=f"incident.update:{update.pk}",
        kind="incident.update",
        title=f"{update.get_status_display()}: {incident_title(incident)}",
        text=update.message,
        at=update.created_at,
        incident_id=incident.pk,
        project_id=incident.project_id,
    )


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
    return [
        _maintenance_event(window, start, end)
        for window in _windows(ids)
        for start, end in window.occurrences(now, now + MAINTENANCE_NOTICE)
    ]


def _maintenance_news(ids: list[int], since: datetime, until: datetime) -> list[Event]:
    """Occurrences that came within MAINTENANCE_NOTICE in (since, until],
    and every coming occurrence of a window saved then."""
    events = []
    for window in _windows(ids):
        if since < window.updated_at <= until:
            spans = window.occurrences(until, until + MAINTENANCE_NOTICE)
        else:
            horizon = since + MAINTENANCE_NOTICE
            spans = (
                (start, end)
                for start, end in window.occurrences(
                    horizon, until + MAINTENANCE_NOTICE
                )
                if start > horizon
            )
        events += [_maintenance_event(window, start, end) for start, end in spans]
    return events


def _windows(ids: list[int]) -> list[MaintenanceWindow]:
    return list(
        MaintenanceWindow.objects.filter(enabled=True)
        .filter(Q(all_projects=True) | Q(projects__in=ids))
        .distinct()
    )


def _maintenance_event(window: MaintenanceWindow, start: datetime, end: datetime):
    return Event(
        key=f"maintenance:{window.pk}:{start:%Y%m%dT%H%M}",
        kind="maintenance",
        title=f"Maintenance: {window.name}",
        text=f"From {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC.",
        at=min(window.updated_at, start),
    )

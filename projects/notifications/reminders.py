"""Reminders: while an incident is open and nobody has acknowledged it,
each of its channels with `reminder_minutes` is told again once per that
many minutes since the incident was confirmed.

The key names the period, so a run repeated (or two at once) queues
nothing twice, and a tasks process that was down for hours sends one
reminder, not the missed ones.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from django.utils import timezone

from projects.models import Incident, Notification

REMINDER = Notification.Event.REMINDER


def queue_reminders(*, now: Callable[[], datetime] = timezone.now) -> int:
    """Queues the reminders due now; returns how many."""
    current = now()
    rows = [row for incident in _open_incidents() for row in _due(incident, current)]
    existing = set(
        Notification.objects.filter(key__in=[row.key for row in rows]).values_list(
            "key", flat=True
        )
    )
    fresh = [row for row in rows if row.key not in existing]
    Notification.objects.bulk_create(fresh, ignore_conflicts=True)
    if fresh:
        from projects.notifications.tasks import request_delivery

        request_delivery()
    return len(fresh)


def _open_incidents():
    return (
        Incident.objects.filter(resolved_at=None, acknowledged_at=None)
        .select_related("project")
        .prefetch_related("project__channels")
    )


def _due(incident: Incident, now: datetime) -> list[Notification]:
    rows = []
    for channel in incident.project.channels.all():
        if not (channel.enabled and channel.reminder_minutes):
            continue
        every = timedelta(minutes=channel.reminder_minutes)
        period = (now - incident.confirmed_at) // every
        if period >= 1:
            rows.append(_reminder(incident, channel, period, now))
    return rows


def _reminder(incident, channel, period: int, now: datetime) -> Notification:
    return Notification(
        key=f"{REMINDER}:{incident.pk}:{channel.pk}:{period}",
        event=REMINDER,
        channel=channel,
        project=incident.project,
        incident=incident,
        payload=incident_payload(REMINDER, incident, now),
        created_at=now,
        next_attempt_at=now,
    )


def incident_payload(event: str, incident: Incident, now: datetime) -> dict:
    """Version 1 of an incident event's payload."""
    project = incident.project
    end = incident.resolved_at or now
    return {
        "version": 1,
        "event": str(event),
        "occurred_at": now.isoformat(),
        "project": {"id": project.pk, "name": project.name, "url": project.url},
        "incident": {
            "id": incident.pk,
            "kind": incident.kind,
            "started_at": incident.started_at.isoformat(),
            "confirmed_at": incident.confirmed_at.isoformat(),
            "resolved_at": _iso(incident.resolved_at),
            "duration_seconds": int((end - incident.started_at).total_seconds()),
            "first_error": incident.first_error,
            "last_error": incident.last_error,
            "acknowledged_at": _iso(incident.acknowledged_at),
        },
        "links": {},
    }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None

"""Reminders: while an incident is open and nobody has acknowledged it,
each of its channels with `reminder_minutes` is told again once per that
many minutes since the incident was confirmed.

Nothing is sent about a project under maintenance; its reminder goes out
when the window ends, if the incident is still open then.

The key names the period, so a run repeated (or two at once) queues
nothing twice, and a tasks process that was down for hours sends one
reminder, not the missed ones.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from projects.maintenance.schedule import MaintenanceSchedule
from projects.models import Incident, Notification
from projects.notifications.payloads import incident_payload
from projects.notifications.trigger import request_delivery

REMINDER = Notification.Event.REMINDER


def queue_reminders(*, now: Callable[[], datetime] = timezone.now) -> int:
    """Queues the reminders due now; returns how many."""
    current = now()
    incidents = _open_incidents(current)
    rows = [row for incident in incidents for row in _due(incident, current)]
    existing = set(
        Notification.objects.filter(key__in=[row.key for row in rows]).values_list(
            "key", flat=True
        )
    )
    fresh = [row for row in rows if row.key not in existing]
    Notification.objects.bulk_create(fresh, ignore_conflicts=True)
    if fresh:
        transaction.on_commit(request_delivery, robust=True)
    return len(fresh)


def _open_incidents(now: datetime):
    """Open, unacknowledged incidents of projects not under maintenance."""
    incidents = Incident.objects.filter(resolved_at=None, acknowledged_at=None)
    maintained = MaintenanceSchedule.load(now, now).covered_projects(now)
    if maintained is None:
        return []
    if maintained:
        incidents = incidents.exclude(project_id__in=maintained)
    return incidents.select_related("project", "acknowledged_by").prefetch_related(
        "project__channels"
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
        payload=incident_payload(REMINDER, incident, occurred_at=now),
        created_at=now,
        next_attempt_at=now,
    )

"""Payloads this package builds itself (version 1, see the README); the
incident events' payloads are built when they are queued."""

from __future__ import annotations

from datetime import datetime

from projects.models import Incident, Notification, NotificationChannel


def test_payload(channel: NotificationChannel, now: datetime) -> dict:
    return {
        "version": 1,
        "event": Notification.Event.TEST.value,
        "occurred_at": now.isoformat(),
        "message": f"A test notification to “{channel.name}”: this channel works.",
        "project": None,
        "incident": None,
        "links": {},
    }


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

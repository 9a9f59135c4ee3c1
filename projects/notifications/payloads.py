"""The body of every notification, built when it is queued.

Webhooks receive it as JSON exactly; e-mail and Apprise messages are
written from it. `version` changes only when a field changes meaning or
goes away; new fields may appear in any version.
"""

from __future__ import annotations

from datetime import datetime

from django.urls import reverse
from django.utils import timezone

from projects.models import Incident, MonitorOutage
from projects.notifications.links import absolute_url, acknowledge_url
from projects.notifications.redaction import redact_url

PAYLOAD_VERSION = 1


def incident_payload(
    event: str, incident: Incident, *, occurred_at: datetime | None = None
) -> dict:
    """The payload of an incident.* event. `incident.project` must be at
    hand (select_related or assigned)."""
    occurred_at = occurred_at or timezone.now()
    project = incident.project
    return {
        "version": PAYLOAD_VERSION,
        "event": event,
        "occurred_at": _iso(occurred_at),
        # Credentials and tokens in the URL stay in the monitor.
        "project": {
            "id": project.pk,
            "name": project.name,
            "url": redact_url(project.url),
        },
        "incident": _incident_fields(incident, occurred_at),
        "links": incident_links(incident),
    }


def _incident_fields(incident: Incident, occurred_at: datetime) -> dict:
    end = incident.resolved_at or occurred_at
    by = incident.acknowledged_by
    return {
        "id": incident.pk,
        "kind": incident.kind,
        # A flow's names the failing step; empty: named after the project.
        "title": incident.title,
        "started_at": _iso(incident.started_at),
        "confirmed_at": _iso(incident.confirmed_at),
        "resolved_at": _iso(incident.resolved_at),
        "duration_seconds": max(int((end - incident.started_at).total_seconds()), 0),
        "first_error": incident.first_error,
        "last_error": incident.last_error,
        "failed_polls": incident.failed_polls,
        "acknowledged_at": _iso(incident.acknowledged_at),
        "acknowledged_by": by.get_username() if by else None,
    }


def incident_links(incident: Incident) -> dict:
    """Where to look and what to click: the project's page, the incident
    list, and (while it is open and unacknowledged) the acknowledge link."""
    links = {
        "project": absolute_url(
            reverse("dashboard:project", args=[incident.project_id])
        ),
        "incidents": absolute_url(
            f"{reverse('incidents:list')}?project={incident.project_id}"
        ),
    }
    if incident.resolved_at is None and incident.acknowledged_at is None:
        links["acknowledge"] = acknowledge_url(incident.pk)
    return links


def monitor_payload(
    event: str,
    outage: MonitorOutage,
    *,
    message: str,
    occurred_at: datetime | None = None,
    counts: bool = True,
) -> dict:
    """The payload of a monitor.* or poller.* event: the monitor itself,
    not one project, is the subject; `message` says what happened.
    `counts`: with the outage's detail (the install's totals), which only
    the operator's teams read (outbox.queue_monitor_event)."""
    occurred_at = occurred_at or timezone.now()
    end = outage.ended_at or occurred_at
    return {
        "version": PAYLOAD_VERSION,
        "event": event,
        "occurred_at": _iso(occurred_at),
        "message": message,
        "project": None,
        "incident": None,
        "outage": {
            "id": outage.pk,
            "kind": outage.kind,
            "started_at": _iso(outage.started_at),
            "ended_at": _iso(outage.ended_at),
            "duration_seconds": max(int((end - outage.started_at).total_seconds()), 0),
            **(outage.detail if counts else {}),
        },
        "links": {"dashboard": absolute_url(reverse("dashboard:overview"))},
    }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()

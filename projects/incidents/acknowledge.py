"""Acknowledging an incident: someone is on it.

Reminders stop (the deliverer skips acknowledged incidents) and the
channels that were told it opened get incident.acknowledged, once.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from projects.models import ApiKey, Incident, Notification
from projects.notifications import outbox
from projects.notifications.payloads import incident_payload
from projects.teams.audit import Actor, record, snapshot

Event = Notification.Event


def acknowledge(
    incident_id: int,
    *,
    by: AbstractBaseUser | None = None,
    key: ApiKey | None = None,
    actor: Actor | None = None,
    at: datetime | None = None,
) -> bool:
    """Acknowledge an open incident: by a user, by an API `key`, or (both
    None) through the signed link. `actor`, when given, signs an audit
    entry in the same transaction. Returns False when it was already
    acknowledged, is resolved or gone."""
    at = at or timezone.now()
    with transaction.atomic():
        before = snapshot(Incident(pk=incident_id)) if actor else {}
        # Compare-and-set: of two clicks, or a click and the recovery, one
        # wins and only it queues the message.
        won = Incident.objects.filter(
            pk=incident_id, resolved_at=None, acknowledged_at=None
        ).update(acknowledged_at=at, acknowledged_by=by, acknowledged_by_key=key)
        if not won:
            return False
        incident = Incident.objects.select_related("project", "acknowledged_by").get(
            pk=incident_id
        )
        if actor:
            record(incident, before, actor=actor)
        message = outbox.Message(
            event=Event.ACKNOWLEDGED,
            key=outbox.message_key(Event.ACKNOWLEDGED, incident_id),
            payload=incident_payload(Event.ACKNOWLEDGED, incident, occurred_at=at),
            project_id=incident.project_id,
            incident_id=incident_id,
        )
        outbox.queue_for_audience([message])
    return True

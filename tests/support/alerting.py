"""Helpers for the incident and notification tests."""

from __future__ import annotations

import itertools

from projects.models import Notification, NotificationChannel
from projects.teams.audit import entries_for

_numbers = itertools.count(1)


def make_channel(**fields) -> NotificationChannel:
    """A saved webhook channel to a closed local port; nothing delivers it
    in these tests."""
    number = next(_numbers)
    fields.setdefault("name", f"channel {number}")
    fields.setdefault("kind", NotificationChannel.Kind.WEBHOOK)
    fields.setdefault("url", f"http://127.0.0.1:9/hook/{number}")
    return NotificationChannel.objects.create(**fields)


def queued(**filters) -> list[tuple[str, str]]:
    """(event, state) of the outbox rows matching `filters`, by incident
    (in the order they opened), then oldest first. Within one batch the
    openings are queued before the resolutions."""
    rows = Notification.objects.filter(**filters).order_by("incident_id", "pk")
    return list(rows.values_list("event", "state"))


def queued_events(**filters) -> list[str]:
    return [event for event, _ in queued(**filters)]


def assert_acknowledgement_audited(incident, *, actor_name: str, via: str) -> None:
    """The incident's one audit entry: acknowledged by `actor_name`, via
    `via`."""
    [entry] = entries_for(incident)
    assert (entry.actor_name, entry.via, entry.action) == (actor_name, via, "changed")
    changed = {change["field"]: change for change in entry.changes}
    assert changed["acknowledged_at"]["old"] is None
    assert changed["acknowledged_at"]["new"] is not None

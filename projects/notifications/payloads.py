"""Payloads this package builds itself (version 1, see the README); the
incident events' payloads are built when they are queued."""

from __future__ import annotations

from datetime import datetime

from projects.models import Notification, NotificationChannel


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

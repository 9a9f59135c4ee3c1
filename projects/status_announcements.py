"""Telling a status page's confirmed subscribers what happened: one step,
run every minute by the tasks process (projects/schedules.py) and called
directly by tests.

It reads each page's recent events (projects.status_events) and queues
each one for each confirmed subscriber who subscribed before it happened.
Outbox keys name the event and the subscriber's channel, so running it
again, or in two processes at once, queues nothing twice. Maintenance is
announced once per occurrence, up to a week ahead.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from projects.models import StatusPage, Subscriber
from projects.notifications import outbox
from projects.status_events import Event, page_events
from projects.status_subscriptions import links

# Events older than this are never announced: a tasks process down for
# longer does not flood subscribers with stale news when it comes back.
LOOKBACK = timedelta(days=1)


def announce(*, now: Callable[[], datetime] = timezone.now) -> int:
    """Queues every unannounced event; returns how many rows were offered."""
    moment = now()
    queued = 0
    pages = StatusPage.objects.filter(subscribers__confirmed_at__isnull=False)
    for page in pages.distinct():
        queued += announce_page(page, moment)
    return queued


def announce_page(page: StatusPage, now: datetime) -> int:
    subscribers = list(
        Subscriber.objects.filter(
            page=page, confirmed_at__isnull=False, channel__isnull=False
        ).select_related("page")
    )
    events = page_events(page, now - LOOKBACK, now)
    deliveries = [
        (message(page, event, subscriber), [subscriber.channel_id])
        for event in events
        for subscriber in subscribers
        if event.kind == "maintenance" or event.at >= subscriber.confirmed_at
    ]
    with transaction.atomic():
        return outbox.queue(deliveries)


def message(page: StatusPage, event: Event, subscriber: Subscriber) -> outbox.Message:
    kind = f"status.{event.kind.removeprefix('incident.')}"
    payload = {
        "version": 1,
        "event": kind,
        "title": f"[{page.title}] {event.title}",
        "occurred_at": event.at.isoformat(),
        "message": event.text,
        "page": {"title": page.title, "slug": page.slug},
        "links": links(subscriber),
    }
    if event.incident_id:
        payload["incident"] = {"id": event.incident_id}
    return outbox.Message(
        event=kind,
        key=f"status:{page.pk}:{event.key}",
        payload=payload,
        project_id=event.project_id,
        incident_id=event.incident_id,
    )

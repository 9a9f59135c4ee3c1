"""Telling a status page's confirmed subscribers what happened: one step,
run every minute by the tasks process (projects/schedules.py) and called
directly by tests.

Each run reads only what appeared since the last one: a high-water mark
(AnnouncementCursor) says up to when every change has been queued, and
the run reads the changes stamped after it (projects.announcements.events
page_news) and queues each event for each confirmed subscriber who
subscribed before it happened. With nothing new, a run costs a few small
queries whatever the number of subscribers and past events.

A change is stamped (updated_at, created_at) before its transaction
commits, so a run reads only up to SETTLE ago: a change still being
committed then is read by the next run, not skipped. Two processes may
run at once: outbox keys name the event and the subscriber's channel, so
both queue nothing twice, and the mark moves by compare-and-set.
Maintenance is announced once per occurrence, up to a week ahead.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from projects.announcements.events import (
    MAINTENANCE_NOTICE,
    SHOWN_KINDS,
    Event,
    maintenance_events,
    page_news,
    page_project_ids,
)
from projects.announcements.subscriptions import links
from projects.models import (
    AnnouncementCursor,
    Incident,
    MaintenanceWindow,
    StatusPage,
    StatusUpdate,
    Subscriber,
)
from projects.notifications import outbox

CURSOR = "status announcements"
# Events older than this are never announced: a tasks process down for
# longer does not flood subscribers with stale news when it comes back.
LOOKBACK = timedelta(days=1)
# Longer than any transaction that stamps a change takes to commit.
SETTLE = timedelta(seconds=30)


def announce(*, now: Callable[[], datetime] = timezone.now) -> int:
    """Queues every event that appeared since the last run; returns how
    many rows were offered to the outbox."""
    until = now() - SETTLE
    cursor, _ = AnnouncementCursor.objects.get_or_create(
        name=CURSOR, defaults={"position": until - LOOKBACK}
    )
    since = max(cursor.position, until - LOOKBACK)
    if since >= until:
        return 0
    queued = 0
    if anything_new(since, until):
        pages = StatusPage.objects.filter(subscribers__confirmed_at__isnull=False)
        for page in pages.distinct():
            queued += announce_page(page, since, until)
    AnnouncementCursor.objects.filter(pk=cursor.pk, position=cursor.position).update(
        position=until
    )
    return queued


def anything_new(since: datetime, until: datetime) -> bool:
    """Whether any page may have news in (since, until]: a cheap look
    before reading each page's."""
    stamped = Q(updated_at__gt=since, updated_at__lte=until)
    return (
        Incident.objects.filter(stamped, kind__in=SHOWN_KINDS).exists()
        or StatusUpdate.objects.filter(
            created_at__gt=since, created_at__lte=until
        ).exists()
        or any(
            since < window.updated_at <= until
            or any(
                start > since + MAINTENANCE_NOTICE
                for start, _ in window.occurrences(
                    since + MAINTENANCE_NOTICE, until + MAINTENANCE_NOTICE
                )
            )
            for window in MaintenanceWindow.objects.filter(enabled=True)
        )
    )


def announce_page(page: StatusPage, since: datetime, until: datetime) -> int:
    subscribers = list(listening(page).select_related("page"))
    deliveries = [
        (message(page, event, subscriber), [subscriber.channel_id])
        for event in page_news(page, since, until)
        for subscriber in subscribers
        if event.kind == "maintenance" or event.at >= subscriber.confirmed_at
    ]
    with transaction.atomic():
        return outbox.queue(deliveries)


def listening(page: StatusPage):
    """The page's confirmed subscribers; for a private page, only those
    whose member is still in the page's team (or a superuser), so someone
    who left the team stops hearing of it."""
    found = Subscriber.objects.filter(
        page=page, confirmed_at__isnull=False, channel__isnull=False
    )
    if page.is_public:
        return found
    member = Q(user__memberships__team_id=page.team_id) | Q(user__is_superuser=True)
    return found.filter(member, user__is_active=True).distinct()


def welcome(subscriber: Subscriber, now: datetime) -> int:
    """Queues the page's coming maintenance for a subscriber who has just
    confirmed: it was announced to the others before they were here."""
    page = subscriber.page
    events = maintenance_events(page_project_ids(page), now)
    return outbox.queue(
        (message(page, event, subscriber), [subscriber.channel_id]) for event in events
    )


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
    if event.kind == "incident.update":
        payload["message_format"] = "markdown"  # the others are plain text
    if event.incident_id:
        payload["incident"] = {"id": event.incident_id}
    return outbox.Message(
        event=kind,
        key=f"status:{page.pk}:{event.key}",
        payload=payload,
        project_id=event.project_id,
        incident_id=event.incident_id,
    )

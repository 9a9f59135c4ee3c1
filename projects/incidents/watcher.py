"""The watcher is watched: a job on the tasks process that tells the
default channels when no poller has been seen for POLLER_SILENT_SECONDS,
and again when one is back.

Each runpoller keeps its PollerNode row fresh (polling/node.py). A silence
is a MonitorOutage of kind "poller silent", at most one open (a partial
unique constraint), and its messages' keys name it, so runs repeated or
overlapping tell each thing once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from projects.incidents.region_outages import watch_regions
from projects.models import MonitorOutage, Notification, PollerNode
from projects.notifications import outbox

# Rows of pollers gone this long are removed: a restart makes a new one.
FORGET_NODES_AFTER = timedelta(days=7)

Event = Notification.Event
SILENT = MonitorOutage.Kind.POLLER_SILENT


def watch_pollers(*, now: datetime | None = None) -> str:
    """One look; returns what it found, for the task's result."""
    now = now or timezone.now()
    PollerNode.objects.filter(last_seen_at__lt=now - FORGET_NODES_AFTER).delete()
    # Each region too, when there are several (docs/regions.md).
    watch_regions(now=now)
    newest = PollerNode.objects.order_by("-last_seen_at").first()
    if newest is None:
        return "no poller has ever reported"
    silent = now - newest.last_seen_at > timedelta(
        seconds=settings.POLLER_SILENT_SECONDS
    )
    with transaction.atomic():
        if silent:
            return _silent(newest, now)
        return _heard(newest, now)


def _silent(newest: PollerNode, now: datetime) -> str:
    if MonitorOutage.objects.filter(kind=SILENT, ended_at=None).exists():
        return "still silent"
    detail = {
        "last_seen_at": newest.last_seen_at.isoformat(),
        "poller": newest.name,
        "stopped_cleanly": newest.stopped_at is not None,
    }
    try:
        with transaction.atomic():
            outage = MonitorOutage.objects.create(
                kind=SILENT, started_at=newest.last_seen_at, detail=detail
            )
    except IntegrityError:
        return "still silent"  # another run got there first
    minutes = int((now - newest.last_seen_at).total_seconds() // 60)
    outbox.queue_monitor_event(
        Event.POLLER_SILENT,
        outage,
        now,
        f"No poller has reported for {minutes} min: nothing is being "
        f"checked. Last seen: {newest.name}"
        + (", which stopped cleanly." if newest.stopped_at else "."),
    )
    return "silent"


def _heard(newest: PollerNode, now: datetime) -> str:
    outage = MonitorOutage.objects.filter(kind=SILENT, ended_at=None).first()
    if outage is None:
        return "running"
    closed = MonitorOutage.objects.filter(pk=outage.pk, ended_at=None).update(
        ended_at=newest.last_seen_at
    )
    if not closed:
        return "running"  # another run closed it
    outage.ended_at = newest.last_seen_at
    outbox.queue_monitor_event(
        Event.POLLER_BACK,
        outage,
        now,
        f"A poller reports again ({newest.name}); checks go on.",
    )
    return "back"

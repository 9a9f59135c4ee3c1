"""Storms: many opened (or resolved) events for one channel in a short
window go out as one digest instead of one message each.

A window opens with a channel's oldest waiting event of a kind and lasts
ALERT_DIGEST_SECONDS; when it closes, more than ALERT_DIGEST_THRESHOLD
events in it become one digest row (the covered rows point at it), fewer
are sent one by one. Windows are worked out from the pending rows alone,
so a restart loses nothing and a second deliverer reaches the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import groupby

from django.db import transaction
from django.db.models import Q

from projects.models import Notification
from projects.notifications.config import DeliveryConfig

GROUPED_EVENTS = (Notification.Event.OPENED, Notification.Event.RESOLVED)


@dataclass(frozen=True, slots=True)
class Window:
    channel_id: int
    event: str
    closes_at: datetime
    ids: tuple[int, ...]


def waiting_for_group() -> Q:
    """Rows that wait for their window: grouped events not tried yet."""
    return Q(event__in=GROUPED_EVENTS, attempts=0)


def windows(now: datetime, config: DeliveryConfig) -> list[Window]:
    """Every window of unclaimed, untried grouped events, oldest first."""
    rows = (
        Notification.objects.filter(state=Notification.State.PENDING)
        .filter(waiting_for_group())
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lte=now))
        .order_by("channel_id", "event", "created_at", "id")
        .values_list("channel_id", "event", "created_at", "id")
    )
    found = []
    for (channel_id, event), group in groupby(rows, key=lambda row: row[:2]):
        found += _split(channel_id, event, list(group), config)
    return sorted(found, key=lambda window: window.closes_at)


def _split(channel_id, event, rows, config: DeliveryConfig) -> list[Window]:
    found = []
    length = timedelta(seconds=config.digest_seconds)
    while rows:
        closes_at = rows[0][2] + length
        inside = [row for row in rows if row[2] < closes_at] or rows[:1]
        found.append(Window(channel_id, event, closes_at, tuple(r[3] for r in inside)))
        rows = rows[len(inside) :]
    return found


def release(window: Window, config: DeliveryConfig, now: datetime) -> list[int]:
    """Turns a closed window into what to send: the ids to send one by one,
    or a digest's id. Returns [] when another deliverer got there first."""
    if len(window.ids) <= config.digest_threshold:
        return list(window.ids)
    with transaction.atomic():
        digest = _create_digest(window, now)
        covered = _cover(window, digest, now)
        if covered != len(window.ids):
            transaction.set_rollback(True)
            return []
    return [digest.pk]


def _create_digest(window: Window, now: datetime) -> Notification:
    rows = list(
        Notification.objects.filter(pk__in=window.ids).order_by("created_at", "id")
    )
    return Notification.objects.create(
        key=f"digest:{window.channel_id}:{rows[0].key}"[:200],
        event=Notification.Event.DIGEST,
        channel_id=window.channel_id,
        payload=digest_payload(window.event, [row.payload for row in rows], now),
        created_at=now,
        next_attempt_at=now,
    )


def _cover(window: Window, digest: Notification, now: datetime) -> int:
    return (
        Notification.objects.filter(
            pk__in=window.ids, state=Notification.State.PENDING, attempts=0
        )
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lte=now))
        .update(state=Notification.State.DIGESTED, digest=digest)
    )


def digest_payload(event: str, payloads: list[dict], now: datetime) -> dict:
    """Version 1 of a digest: the covered events' project, incident and
    links, in the order they happened."""
    return {
        "version": 1,
        "event": Notification.Event.DIGEST.value,
        "occurred_at": now.isoformat(),
        "digest": {
            "of": str(event),
            "count": len(payloads),
            "events": [_digest_item(payload) for payload in payloads],
        },
    }


def _digest_item(payload: dict) -> dict:
    keys = ("event", "occurred_at", "project", "incident", "links")
    return {key: payload[key] for key in keys if key in payload}

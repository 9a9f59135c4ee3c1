"""Alerts in seconds, storms in one digest.

Grouped events (incident opened, resolved, escalated) wait in the outbox
until the deliverer releases them. Per channel and event, with D =
ALERT_DIGEST_SECONDS and T = ALERT_DIGEST_THRESHOLD:

1. Quiet (nothing of the kind released to the channel in the last D
   seconds): the oldest waiting event goes at once, alone; a lone outage
   is told in seconds. Should more than T already be waiting (a storm
   caught in one batch), they all go at once as one digest instead.
2. A release opens a window of D seconds. Events arriving inside it wait
   for it to close, then go together: one by one when there are at most
   T of them, else as one digest. That release opens the next window.

So a storm reaches each channel as its first event plus one digest, and
one more message per D seconds while it goes on; after D quiet seconds
the next event is sent at once again. Two events at the same moment: the
first at once, the second when the window closes. D = 0 sends every
event at once, alone, and never a digest.

Windows are worked out from the rows alone (`released_at` and the waiting
rows), so a restart loses nothing; a release runs in a transaction that
locks the channel's row, so of two deliverers one releases and the other
finds the window open.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Max, Min, Q

from projects.models import Notification, NotificationChannel
from projects.notifications.config import DeliveryConfig

Event = Notification.Event
GROUPED_EVENTS = (Event.OPENED, Event.RESOLVED, Event.ESCALATED)


@dataclass(frozen=True, slots=True)
class Window:
    """A channel's waiting events of one kind and when they may go."""

    channel_id: int
    event: str
    releases_at: datetime


@dataclass(frozen=True, slots=True)
class Waiting:
    id: int
    created_at: datetime


def waiting_for_group() -> Q:
    """Rows that wait for their release: grouped events never released nor
    tried."""
    return Q(event__in=GROUPED_EVENTS, released_at=None, attempts=0)


def windows(now: datetime, config: DeliveryConfig) -> list[Window]:
    """When each channel's waiting events of each kind may go, soonest
    first; due ones have `releases_at` <= now."""
    rows = list(
        _waiting(now)
        .order_by("channel_id", "event")
        .values_list("channel_id", "event")
        .annotate(oldest=Min("created_at"))
    )
    if not rows:
        return []
    oldest = min(created for *_, created in rows)
    last = last_releases(since=oldest - _length(config))
    found = [
        Window(
            channel_id, event, releases_at(last.get((channel_id, event)), now, config)
        )
        for channel_id, event, _ in rows
    ]
    return sorted(found, key=lambda window: window.releases_at)


def releases_at(last: datetime | None, now: datetime, config: DeliveryConfig):
    """Quiet: now. Inside the window the last release opened: its end."""
    if last is None or last + _length(config) <= now:
        return now
    return last + _length(config)


def last_releases(*, since: datetime) -> dict[tuple[int, str], datetime]:
    """{(channel id, event): its latest release} of releases after `since`."""
    rows = (
        Notification.objects.filter(event__in=GROUPED_EVENTS, released_at__gt=since)
        .values("channel_id", "event")
        .annotate(last=Max("released_at"))
        .values_list("channel_id", "event", "last")
        .order_by()
    )
    return {(channel_id, event): last for channel_id, event, last in rows}


def release(window: Window, config: DeliveryConfig, now: datetime) -> list[int]:
    """Releases the window's events as the rule says: the ids to send one by
    one, or a digest's id. Returns [] when it is not due (another
    deliverer released meanwhile) or nothing waits any more."""
    with transaction.atomic():
        # Serialises releases per channel (SQLite's write lock does already).
        list(
            NotificationChannel.objects.select_for_update().filter(pk=window.channel_id)
        )
        key = (window.channel_id, window.event)
        waiting = [
            Waiting(pk, created)
            for pk, created in _waiting(now)
            .filter(channel_id=window.channel_id, event=window.event)
            .order_by("created_at", "id")
            .values_list("id", "created_at")
        ]
        if not waiting:
            return []
        last = last_releases(since=waiting[0].created_at - _length(config)).get(key)
        if releases_at(last, now, config) > now:
            return []
        return _release(window, chosen(waiting, last, config), config, now)


def chosen(
    waiting: list[Waiting], last: datetime | None, config: DeliveryConfig
) -> tuple[list[Waiting], bool]:
    """What goes now of a due group (oldest first), and whether as a digest:
    the rule of this module's docstring, as a pure function."""
    if not config.digest_seconds:  # no windows: everything at once, alone
        return waiting, False
    if len(waiting) > config.digest_threshold:
        return waiting, True
    held = last is not None and waiting[0].created_at < last + _length(config)
    if held:
        return waiting, False
    return waiting[:1], False


def _release(window, choice, config, now) -> list[int]:
    rows, as_digest = choice
    ids = [row.id for row in rows]
    digest = _create_digest(window, ids, now) if as_digest else None
    changes = {"released_at": now}
    if digest is not None:
        changes |= {"state": Notification.State.DIGESTED, "digest": digest}
    released = _waiting(now).filter(pk__in=ids).update(**changes)
    if released != len(ids):
        # The writer held some (the monitor is cut off): next time.
        transaction.set_rollback(True)
        return []
    return [digest.pk] if digest is not None else ids


def _waiting(now: datetime):
    """Unclaimed pending rows waiting for their release."""
    return (
        Notification.objects.filter(state=Notification.State.PENDING)
        .filter(waiting_for_group())
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lte=now))
    )


def _length(config: DeliveryConfig) -> timedelta:
    return timedelta(seconds=config.digest_seconds)


def _create_digest(window: Window, ids: list[int], now: datetime) -> Notification:
    rows = list(Notification.objects.filter(pk__in=ids).order_by("created_at", "id"))
    return Notification.objects.create(
        key=f"digest:{window.channel_id}:{rows[0].key}"[:200],
        event=Event.DIGEST,
        channel_id=window.channel_id,
        payload=digest_payload(window.event, [row.payload for row in rows], now),
        created_at=now,
        next_attempt_at=now,
    )


def digest_payload(event: str, payloads: list[dict], now: datetime) -> dict:
    """Version 1 of a digest: the covered events' project, incident and
    links, in the order they happened."""
    return {
        "version": 1,
        "event": Event.DIGEST.value,
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

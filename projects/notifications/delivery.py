"""Delivering due notifications: claim, send, record, reschedule.

`deliver_due()` is one step that tests call directly; the tasks in
`projects.notifications.tasks` run it on the tasks process. Sends run on
a pool of ALERT_DELIVERY_CONCURRENCY seats: a row is claimed (a
compare-and-set on `claimed_until`) just before it takes a free seat, sent
with no transaction open, and its attempt recorded as soon as its send
ends, when the seat takes the next row. A receiver that never answers
holds one seat until its timeout; the others go on.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from projects.models import Notification, NotificationChannel
from projects.notifications import digests, transports
from projects.notifications.attempts import Result, Sender
from projects.notifications.config import DeliveryConfig
from projects.notifications.outbound_guard import Guard, subscriber_guard
from projects.notifications.outgoing import DeliveryError, Outgoing
from projects.notifications.recording import record

logger = logging.getLogger(__name__)

# While every seat waits on a send, look this often for rows that fell due
# meanwhile (a lone alert must not wait behind a receiver that hangs).
REFILL_SECONDS = 0.5


@dataclass(frozen=True, slots=True, order=True)
class Wake:
    at: datetime
    channel_id: int


def deliver_due(
    *,
    now: Callable[[], datetime] = timezone.now,
    sender: Sender = transports.send,
    config: DeliveryConfig | None = None,
) -> int:
    """Sends every notification due now, up to `batch_size` sends; returns
    how many sends were attempted. Only this thread touches the database:
    the seats send."""
    config = config or DeliveryConfig.from_settings()
    due = deque(due_ids(now(), config))
    seats: dict[Future[Result], Notification] = {}
    attempted = 0
    with ThreadPoolExecutor(config.concurrency, thread_name_prefix="deliver") as pool:
        while due or seats:
            while due and len(seats) < config.concurrency:
                notification = take(due.popleft(), now(), config)
                if notification is not None:
                    send = pool.submit(
                        send_one, notification, sender=sender, config=config, now=now
                    )
                    seats[send] = notification
            if not seats:
                continue
            ended, _ = wait(seats, timeout=REFILL_SECONDS, return_when=FIRST_COMPLETED)
            for send in ended:
                del seats[send]
                record(send.result(), now=now())
                attempted += 1
            if not due and attempted + len(seats) < config.batch_size:
                # Rows in flight are claimed, so they are not found again.
                due.extend(due_ids(now(), config))
    return attempted


def take(pk: int, now: datetime, config: DeliveryConfig) -> Notification | None:
    """The row, claimed for a seat; None when another deliverer has it or
    its channel no longer wants it."""
    claimed = claim([pk], now, config)
    if not claimed or skipped(claimed[0], now):
        return None
    return claimed[0]


def due_ids(now: datetime, config: DeliveryConfig) -> list[int]:
    """Rows due now: retries and ungrouped events, then released ones."""
    ids = list(
        _claimable(now)
        .filter(next_attempt_at__lte=now)
        .exclude(digests.waiting_for_group())
        .order_by("next_attempt_at", "id")
        .values_list("id", flat=True)[: config.batch_size]
    )
    for window in digests.windows(now, config):
        if window.releases_at > now or len(ids) >= config.batch_size:
            break
        ids += digests.release(window, config, now)
    return ids[: config.batch_size]


def claim(ids: list[int], now: datetime, config: DeliveryConfig) -> list[Notification]:
    """The rows this deliverer won; a row another one claimed is left."""
    until = now + timedelta(seconds=config.claim_seconds)
    won = [
        pk for pk in ids if _claimable(now).filter(pk=pk).update(claimed_until=until)
    ]
    rows = Notification.objects.filter(pk__in=won).select_related(
        "channel__team", "channel__subscriber"
    )
    return sorted(rows, key=lambda row: won.index(row.pk))


def next_wake(now: datetime, config: DeliveryConfig) -> Wake | None:
    """When something next falls due, and for which channel: a retry or a
    digest window closing. None when nothing is pending."""
    # A row another run holds is that run's to finish (or, if the run died,
    # the sweeper's once its claim expires).
    retry = (
        _claimable(now)
        .exclude(digests.waiting_for_group())
        .order_by("next_attempt_at")
        .values_list("next_attempt_at", "channel_id")
        .first()
    )
    wakes = [Wake(*retry)] if retry else []
    wakes += [Wake(w.releases_at, w.channel_id) for w in digests.windows(now, config)]
    return min(wakes, default=None)


def _claimable(now: datetime):
    return Notification.objects.filter(state=Notification.State.PENDING).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lte=now)
    )


def skipped(notification: Notification, now: datetime) -> bool:
    """Drops a row its channel no longer wants; says whether it did."""
    channel = notification.channel
    reason = ""
    if not channel.enabled:
        reason = "channel disabled"
    elif notification.event == Notification.Event.RESOLVED and not (
        channel.send_resolved
    ):
        reason = "channel does not send recoveries"
    if reason:
        Notification.objects.filter(pk=notification.pk).update(
            state=Notification.State.DROPPED, last_error=reason, claimed_until=None
        )
    return bool(reason)


def send_one(
    notification: Notification,
    *,
    sender: Sender,
    config: DeliveryConfig,
    now: Callable[[], datetime] = timezone.now,
) -> Result:
    attempted_at = now()
    started = time.monotonic()
    sent = error = None
    try:
        sent = sender(outgoing(notification), timeout=config.timeout_seconds)
    except DeliveryError as failure:
        error = failure
    except Exception as failure:
        # A bug in a transport must not lose the row: it is retried.
        logger.exception("notification %s: unexpected error", notification.pk)
        error = DeliveryError(f"internal error: {type(failure).__name__}")
    duration_ms = int((time.monotonic() - started) * 1000)
    return Result(notification, attempted_at, duration_ms, sent, error)


def outgoing(notification: Notification) -> Outgoing:
    channel = notification.channel
    return Outgoing(
        key=notification.key,
        event=notification.event,
        payload=notification.payload,
        kind=channel.kind,
        url=channel.url,
        secret=channel.secret,
        channel_name=channel.name,
        guard=guard_for(channel),
    )


def guard_for(channel: NotificationChannel) -> Guard | None:
    """A subscriber's webhook is a visitor's: always guarded, and kept to
    public addresses unless STATUS_WEBHOOK_ALLOW_PRIVATE. Another channel is
    guarded unless its team is trusted. E-mail goes to EMAIL_URL's server."""
    if channel.kind == NotificationChannel.Kind.EMAIL:
        return None
    if getattr(channel, "subscriber", None) is not None:
        guard = subscriber_guard(
            settings.POLL_BLOCKED_NETWORKS,
            allow_private=settings.STATUS_WEBHOOK_ALLOW_PRIVATE,
        )
    elif channel.team.trusted:
        return None
    else:
        guard = Guard.of(settings.POLL_BLOCKED_NETWORKS)
    return guard if (guard.networks or guard.public_only) else None

"""The outcome of one send, written down: the delivery log row, the
notification's next step and the channel's health, in one transaction."""

from __future__ import annotations

import logging
import random
from datetime import datetime

from django.db import transaction

from projects.models import DeliveryAttempt, Notification, NotificationChannel
from projects.notifications import backoff
from projects.notifications.attempts import Result

logger = logging.getLogger(__name__)


def record(result: Result, *, now: datetime, rng: random.Random | None = None) -> str:
    """Writes the attempt down; returns the notification's new state."""
    notification = result.notification
    error = result.error
    attempts = notification.attempts + 1
    changes = _next_step(notification, error, attempts, now, rng)
    with transaction.atomic():
        DeliveryAttempt.objects.create(
            notification=notification,
            attempted_at=result.attempted_at,
            result=_log_result(error, changes["state"]),
            http_status=(result.sent or error).http_status,
            error=error.reason if error else "",
            duration_ms=result.duration_ms,
        )
        Notification.objects.filter(pk=notification.pk).update(**changes)
        _update_channel(notification.channel_id, error, now)
    _log(notification, error, changes)
    return changes["state"]


def _next_step(notification, error, attempts, now, rng) -> dict:
    changes = {"attempts": attempts, "claimed_until": None}
    if error is None:
        return {
            **changes,
            "state": Notification.State.DELIVERED,
            "delivered_at": now,
            "last_error": "",
        }
    changes["last_error"] = error.reason
    retry_at = _retry_at(notification, error, attempts, now, rng)
    if retry_at is None:
        return {**changes, "state": Notification.State.FAILED}
    return {**changes, "state": Notification.State.PENDING, "next_attempt_at": retry_at}


def _retry_at(notification, error, attempts, now, rng) -> datetime | None:
    """When to try again; None when the failure is final."""
    if error.permanent or notification.event == Notification.Event.TEST:
        return None
    wait = backoff.retry_after(error.retry_after, now)
    if wait is None:
        wait = backoff.retry_delay(attempts, rng=rng)
    retry_at = now + wait
    if backoff.gives_up(notification.created_at, retry_at):
        return None
    return retry_at


def _log_result(error, state: str) -> str:
    if error is None:
        return DeliveryAttempt.Result.DELIVERED
    if state == Notification.State.PENDING:
        return DeliveryAttempt.Result.RETRY
    return DeliveryAttempt.Result.FAILED


def _update_channel(channel_id: int, error, now: datetime) -> None:
    channels = NotificationChannel.objects.filter(pk=channel_id)
    if error is None:
        channels.exclude(failing_since=None).update(failing_since=None, last_error="")
    elif error.permanent:
        channels.filter(failing_since=None).update(failing_since=now)
        channels.update(last_error=error.reason)


def _log(notification: Notification, error, changes: dict) -> None:
    # The reason never holds the channel's URL or secret (transports see to
    # that), so it is safe to log.
    if error is None:
        logger.info(
            "%s delivered to channel %s", notification.event, notification.channel_id
        )
    else:
        logger.warning(
            "%s to channel %s failed (%s): %s",
            notification.event,
            notification.channel_id,
            changes["state"],
            error.reason,
        )

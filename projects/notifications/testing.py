"""The admin's "send test notification": one real send, now, through the
same path and delivery log as every other notification."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from projects.models import Notification, NotificationChannel
from projects.notifications import transports
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import claim, send_one
from projects.notifications.recording import record


@dataclass(frozen=True, slots=True)
class TestOutcome:
    delivered: bool
    summary: str  # "delivered (HTTP 200) in 35 ms", "failed: HTTP 404 Not Found"


def send_test(channel: NotificationChannel, *, sender=transports.send) -> TestOutcome:
    """Sends a test message to the channel and waits for the answer (the
    transport's timeout bounds it)."""
    config = DeliveryConfig.from_settings()
    now = timezone.now()
    queued = Notification.objects.create(
        key=f"test:{channel.pk}:{uuid.uuid4().hex}",
        event=Notification.Event.TEST,
        channel=channel,
        payload=test_payload(channel, now),
        created_at=now,
        next_attempt_at=now,
    )
    (notification,) = claim([queued.pk], now, config)
    result = send_one(notification, sender=sender, config=config)
    record(result, now=timezone.now())
    return _outcome(result)


def _outcome(result) -> TestOutcome:
    if result.error is not None:
        return TestOutcome(False, f"failed: {result.error.reason}")
    status = result.sent.http_status
    answer = f" (HTTP {status})" if status else ""
    return TestOutcome(True, f"delivered{answer} in {result.duration_ms} ms")


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

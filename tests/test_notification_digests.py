"""Storms: more than ALERT_DIGEST_THRESHOLD events for one channel within
ALERT_DIGEST_SECONDS go out as one digest."""

from __future__ import annotations

from datetime import timedelta

import pytest

from projects.models import Notification
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due, next_wake

CONFIG = DeliveryConfig(digest_threshold=5, digest_seconds=30, timeout_seconds=2)


@pytest.fixture
def hook(make_channel, webhook_receiver):
    return make_channel(url=webhook_receiver.url())


def deliver(clock) -> int:
    return deliver_due(now=clock.now, config=CONFIG)


def test_grouped_events_wait_for_their_window_to_close(
    hook, queue_notification, webhook_receiver, clock
):
    queue_notification(hook)

    assert deliver(clock) == 0
    assert next_wake(clock.now(), CONFIG).at == clock.now() + timedelta(seconds=30)
    clock.advance(29)
    assert deliver(clock) == 0
    clock.advance(1)
    assert deliver(clock) == 1
    assert webhook_receiver.events() == ["incident.opened"]


def test_up_to_the_threshold_each_event_is_sent_on_its_own(
    hook, queue_notification, webhook_receiver, clock
):
    for _ in range(5):
        queue_notification(hook)
        clock.advance(5)

    clock.advance(30)
    deliver(clock)

    assert webhook_receiver.events() == ["incident.opened"] * 5


def test_more_than_the_threshold_become_one_digest(
    hook, queue_notification, webhook_receiver, clock
):
    rows = []
    for _ in range(6):
        rows.append(queue_notification(hook))
        clock.advance(4)

    clock.advance(30)
    assert deliver(clock) == 1

    (request,) = webhook_receiver.requests
    body = request.json()
    assert body["event"] == "digest"
    assert body["digest"]["of"] == "incident.opened"
    assert body["digest"]["count"] == 6
    names = [item["project"]["name"] for item in body["digest"]["events"]]
    assert names == [row.payload["project"]["name"] for row in rows]
    digest = Notification.objects.get(event="digest")
    assert digest.state == Notification.State.DELIVERED
    assert request.headers["webhook-id"] == digest.key
    for row in rows:
        row.refresh_from_db()
        assert row.state == Notification.State.DIGESTED
        assert row.digest_id == digest.pk


def test_fifty_at_once_give_one_digest_per_channel(
    make_channel, queue_notification, webhook_receiver, clock, make_project
):
    channels = [make_channel(url=webhook_receiver.url(f"/{n}")) for n in range(2)]
    for _ in range(50):
        project = make_project()
        for channel in channels:
            queue_notification(channel, project=project)

    clock.advance(30)
    deliver(clock)

    assert sorted(r.path for r in webhook_receiver.requests) == ["/0", "/1"]
    assert {r.json()["digest"]["count"] for r in webhook_receiver.requests} == {50}


def test_recoveries_are_grouped_apart_from_outages(
    hook, queue_notification, webhook_receiver, clock
):
    for _ in range(6):
        queue_notification(hook, "incident.opened")
        queue_notification(hook, "incident.resolved")

    clock.advance(30)
    deliver(clock)

    kinds = sorted(r.json()["digest"]["of"] for r in webhook_receiver.requests)
    assert kinds == ["incident.opened", "incident.resolved"]


def test_events_after_the_window_start_a_new_one(
    hook, queue_notification, webhook_receiver, clock
):
    for _ in range(6):
        queue_notification(hook)
    clock.advance(31)
    queue_notification(hook)

    deliver(clock)

    assert webhook_receiver.events() == ["digest"]
    clock.advance(30)
    deliver(clock)
    assert webhook_receiver.events() == ["digest", "incident.opened"]


def test_other_events_are_never_grouped_or_delayed(
    hook, queue_notification, webhook_receiver, clock
):
    for _ in range(7):
        queue_notification(hook, "incident.reminder")

    deliver(clock)

    assert webhook_receiver.events() == ["incident.reminder"] * 7


def test_a_failed_digest_is_retried_as_one_message(
    hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer(503)
    for _ in range(6):
        queue_notification(hook)
    clock.advance(30)
    deliver(clock)

    clock.advance(60)
    deliver(clock)

    assert webhook_receiver.events() == ["digest", "digest"]
    assert len({r.headers["webhook-id"] for r in webhook_receiver.requests}) == 1
    assert Notification.objects.filter(event="digest").count() == 1

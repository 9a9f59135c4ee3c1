"""The deliverer against a real webhook receiver on 127.0.0.1: claims,
retries with backoff, permanent failures, timeouts and Retry-After."""

from __future__ import annotations

from datetime import timedelta

import pytest
from standardwebhooks.webhooks import Webhook

from projects.models import DeliveryAttempt, Notification
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import claim, deliver_due
from tests.support.webhook_receiver import HANG

CONFIG = DeliveryConfig(digest_seconds=0, timeout_seconds=2)


@pytest.fixture
def hook(make_channel, webhook_receiver):
    return make_channel(url=webhook_receiver.url())


def deliver(clock, config=CONFIG) -> int:
    return deliver_due(now=clock.now, config=config)


def test_it_posts_the_payload_signed_per_standard_webhooks(
    hook, queue_notification, webhook_receiver, clock
):
    notification = queue_notification(hook)

    assert deliver(clock) == 1

    (request,) = webhook_receiver.requests
    assert request.json() == notification.payload
    assert request.headers["content-type"] == "application/json"
    assert request.headers["webhook-id"] == notification.key
    verified = Webhook(hook.secret).verify(request.body, request.headers)
    assert verified == notification.payload


def test_a_tampered_body_does_not_verify(
    hook, queue_notification, webhook_receiver, clock
):
    from standardwebhooks.webhooks import WebhookVerificationError

    queue_notification(hook)
    deliver(clock)

    (request,) = webhook_receiver.requests
    with pytest.raises(WebhookVerificationError):
        Webhook(hook.secret).verify(request.body + b" ", request.headers)


def test_it_marks_a_delivered_notification_and_logs_the_attempt(
    hook, queue_notification, clock
):
    notification = queue_notification(hook)

    deliver(clock)

    notification.refresh_from_db()
    assert notification.state == Notification.State.DELIVERED
    assert notification.delivered_at == clock.now()
    assert notification.attempts == 1
    assert notification.claimed_until is None
    (attempt,) = notification.delivery_attempts.all()
    assert attempt.result == DeliveryAttempt.Result.DELIVERED
    assert attempt.http_status == 200
    assert attempt.error == ""


def test_500_500_200_gives_three_attempts_with_backoff_and_one_id(
    hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer(500, 500)
    notification = queue_notification(hook)

    waits = []
    for _ in range(3):
        assert deliver(clock) == 1
        notification.refresh_from_db()
        waits.append((notification.next_attempt_at - clock.now()).total_seconds())
        # Nothing is due before the backoff has passed.
        assert deliver(clock) == 0
        clock.advance(waits[-1])

    assert [r.status for r in webhook_receiver.requests] == [500, 500, 200]
    assert {r.headers["webhook-id"] for r in webhook_receiver.requests} == {
        notification.key
    }
    assert 24 <= waits[0] <= 36
    assert 96 <= waits[1] <= 144
    assert notification.state == Notification.State.DELIVERED
    results = list(
        notification.delivery_attempts.order_by("attempted_at").values_list(
            "result", "http_status"
        )
    )
    assert results == [("retry", 500), ("retry", 500), ("delivered", 200)]


def test_404_is_permanent_and_marks_the_channel_failing(
    hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer(404)
    notification = queue_notification(hook)

    deliver(clock)
    clock.advance(3600)
    deliver(clock)

    assert len(webhook_receiver.requests) == 1
    notification.refresh_from_db()
    assert notification.state == Notification.State.FAILED
    assert notification.last_error == "HTTP 404 Not Found"
    hook.refresh_from_db()
    assert hook.failing_since == clock.now() - timedelta(seconds=3600)
    assert hook.last_error == "HTTP 404 Not Found"
    assert notification.delivery_attempts.get().result == "failed"


@pytest.mark.parametrize("status", [408, 429, 502, 503])
def test_408_429_and_5xx_are_retried(
    status, hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer(status)
    notification = queue_notification(hook)

    deliver(clock)

    notification.refresh_from_db()
    assert notification.state == Notification.State.PENDING
    assert notification.next_attempt_at > clock.now()
    hook.refresh_from_db()
    assert hook.failing_since is None


def test_a_success_clears_the_failing_mark(
    hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer(410)
    queue_notification(hook)
    deliver(clock)
    queue_notification(hook)

    deliver(clock)

    hook.refresh_from_db()
    assert hook.failing_since is None
    assert hook.last_error == ""


def test_a_receiver_that_never_answers_is_cut_off_by_the_timeout(
    hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer(HANG)
    notification = queue_notification(hook)

    deliver(clock, DeliveryConfig(digest_seconds=0, timeout_seconds=0.5))

    notification.refresh_from_db()
    assert notification.state == Notification.State.PENDING
    assert notification.last_error == "timed out after 0.5 s"
    attempt = notification.delivery_attempts.get()
    assert attempt.http_status is None
    assert 400 <= attempt.duration_ms < 2000


def test_429_with_retry_after_in_seconds_is_honoured(
    hook, queue_notification, webhook_receiver, clock
):
    webhook_receiver.answer((429, {"Retry-After": "300"}))
    notification = queue_notification(hook)

    deliver(clock)

    notification.refresh_from_db()
    assert notification.next_attempt_at == clock.now() + timedelta(seconds=300)
    clock.advance(299)
    assert deliver(clock) == 0
    clock.advance(1)
    assert deliver(clock) == 1


def test_retry_after_as_an_http_date_is_honoured(
    hook, queue_notification, webhook_receiver, clock
):
    from django.utils.http import http_date

    later = clock.now().replace(microsecond=0) + timedelta(seconds=90)
    webhook_receiver.answer((429, {"Retry-After": http_date(later.timestamp())}))
    notification = queue_notification(hook)

    deliver(clock)

    notification.refresh_from_db()
    assert notification.next_attempt_at == later


def test_it_gives_up_after_24_hours(hook, queue_notification, webhook_receiver, clock):
    webhook_receiver.default_status = 503
    notification = queue_notification(hook)

    for _ in range(40):
        deliver(clock)
        notification.refresh_from_db()
        if notification.state != Notification.State.PENDING:
            break
        clock.advance((notification.next_attempt_at - clock.now()).total_seconds())

    assert notification.state == Notification.State.FAILED
    assert clock.now() - notification.created_at <= timedelta(hours=24)
    assert 20 <= notification.attempts <= 30
    assert notification.delivery_attempts.filter(result="failed").count() == 1


def test_a_claimed_row_is_not_claimed_again(hook, queue_notification, clock):
    notification = queue_notification(hook)

    first = claim([notification.pk], clock.now(), CONFIG)
    second = claim([notification.pk], clock.now(), CONFIG)

    assert [n.pk for n in first] == [notification.pk]
    assert second == []


def test_a_claim_that_outlived_its_deliverer_expires(
    hook, queue_notification, webhook_receiver, clock
):
    notification = queue_notification(hook)
    claim([notification.pk], clock.now(), CONFIG)
    assert deliver(clock) == 0

    clock.advance(CONFIG.claim_seconds)

    assert deliver(clock) == 1
    assert len(webhook_receiver.requests) == 1


def test_a_disabled_channel_drops_its_rows(
    make_channel, queue_notification, webhook_receiver, clock
):
    channel = make_channel(url=webhook_receiver.url(), enabled=False)
    notification = queue_notification(channel)

    deliver(clock)

    notification.refresh_from_db()
    assert notification.state == Notification.State.DROPPED
    assert notification.last_error == "channel disabled"
    assert webhook_receiver.requests == []


def test_a_channel_without_send_resolved_drops_recoveries_only(
    make_channel, queue_notification, webhook_receiver, clock
):
    channel = make_channel(url=webhook_receiver.url(), send_resolved=False)
    queue_notification(channel, "incident.opened")
    resolved = queue_notification(channel, "incident.resolved")

    deliver(clock)

    assert webhook_receiver.events() == ["incident.opened"]
    resolved.refresh_from_db()
    assert resolved.state == Notification.State.DROPPED


def test_failures_never_log_the_url_or_secret(
    make_channel, queue_notification, webhook_receiver, clock, caplog
):
    channel = make_channel(url=webhook_receiver.url("/hook?token=s3cr3t-token"))
    webhook_receiver.answer(500)
    queue_notification(channel)

    with caplog.at_level("DEBUG"):
        deliver(clock)

    assert "s3cr3t-token" not in caplog.text
    assert channel.secret not in caplog.text
    assert "failed" in caplog.text


def test_an_unreachable_receiver_is_retried_with_a_readable_reason(
    make_channel, queue_notification, clock
):
    channel = make_channel(url="http://127.0.0.1:9/hook")
    notification = queue_notification(channel)

    deliver(clock)

    notification.refresh_from_db()
    assert notification.state == Notification.State.PENDING
    assert notification.last_error == "connection failed"


def test_a_receiver_that_hangs_holds_one_seat_and_the_others_go_on(
    make_channel, queue_notification, clock
):
    from tests.support.webhook_receiver import WebhookReceiver

    with WebhookReceiver() as slow, WebhookReceiver() as fast:
        slow.answer(HANG)
        hanging = queue_notification(make_channel(url=slow.url()), "incident.reminder")
        quick = make_channel(url=fast.url())
        others = [queue_notification(quick, "incident.reminder") for _ in range(6)]

        # Two seats: one hangs for the 2 s timeout; the other takes the six
        # fast sends one after another while it does.
        config = DeliveryConfig(timeout_seconds=2, concurrency=2)
        assert deliver(clock, config) == 7

        assert len(fast.requests) == 6
    order = list(
        DeliveryAttempt.objects.order_by("pk").values_list("notification_id", "error")
    )
    # Recorded as each send ended: every fast one before the hanging one
    # timed out, so each reached its receiver within the 2 s it was held.
    assert order[:6] == [(row.pk, "") for row in others]
    assert order[6] == (hanging.pk, "timed out after 2 s")

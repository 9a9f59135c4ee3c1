"""Apprise notifications, sent with a json:// URL into a real receiver on
127.0.0.1."""

from __future__ import annotations

from projects.models import Notification
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due
from projects.notifications.transports.apprise import is_understood, with_timeouts

CONFIG = DeliveryConfig(digest_seconds=0, timeout_seconds=2)


def apprise_url(receiver) -> str:
    return f"json://127.0.0.1:{receiver.port}/apprise"


def test_it_sends_title_and_body_through_apprise(
    make_channel, queue_notification, webhook_receiver, clock
):
    channel = make_channel(kind="apprise", url=apprise_url(webhook_receiver))
    notification = queue_notification(channel)

    deliver_due(now=clock.now, config=CONFIG)

    (request,) = webhook_receiver.requests
    assert request.path.startswith("/apprise")
    body = request.json()
    assert body["title"] == f"DOWN: {notification.payload['project']['name']}"
    assert "expected 200, got 503" in body["message"]
    assert body["type"] == "failure"
    notification.refresh_from_db()
    assert notification.state == Notification.State.DELIVERED


def test_a_failed_apprise_send_is_retried_without_logging_the_url(
    make_channel, queue_notification, webhook_receiver, clock, caplog
):
    url = f"json://user:pa55word@127.0.0.1:{webhook_receiver.port}/apprise"
    channel = make_channel(kind="apprise", url=url)
    webhook_receiver.answer(500)
    notification = queue_notification(channel)

    with caplog.at_level("DEBUG"):
        deliver_due(now=clock.now, config=CONFIG)

    notification.refresh_from_db()
    assert notification.state == Notification.State.PENDING
    assert notification.last_error == "Apprise could not send (failure)"
    assert "pa55word" not in caplog.text


def test_an_unknown_apprise_url_fails_for_good(make_channel, queue_notification, clock):
    channel = make_channel(kind="apprise", url="nosuchservice://token")
    notification = queue_notification(channel)

    deliver_due(now=clock.now, config=CONFIG)

    notification.refresh_from_db()
    assert notification.state == Notification.State.FAILED


def test_it_knows_which_urls_apprise_understands():
    assert is_understood("json://127.0.0.1:9/") is True
    assert is_understood("ntfy://ntfy.sh/my-topic") is True
    assert is_understood("nosuchservice://token") is False


def test_timeouts_are_added_unless_the_url_sets_them():
    assert with_timeouts("json://host/path", 10) == "json://host/path?cto=5&rto=10"
    assert with_timeouts("json://host/?rto=30", 10) == "json://host/?rto=30&cto=5"

"""E-mail notifications through Django's locmem backend and through a real
SMTP server on 127.0.0.1."""

from __future__ import annotations

import pytest

from django.core import mail

from projects.models import Notification
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due

CONFIG = DeliveryConfig(digest_seconds=0, timeout_seconds=2)


@pytest.fixture
def mailbox(make_channel):
    return make_channel(kind="email", url="ops@example.com, oncall@example.com")


def test_it_sends_plain_text_and_html(mailbox, queue_notification, clock, settings):
    settings.DEFAULT_FROM_EMAIL = "monitor@example.org"
    notification = queue_notification(mailbox)

    deliver_due(now=clock.now, config=CONFIG)

    (message,) = mail.outbox
    name = notification.payload["project"]["name"]
    assert message.subject == f"DOWN: {name}"
    assert message.to == ["ops@example.com", "oncall@example.com"]
    assert message.from_email == "monitor@example.org"
    assert "First error: expected 200, got 503" in message.body
    html, mimetype = message.alternatives[0]
    assert mimetype == "text/html"
    assert f'<h2 style="margin:0 0 12px">DOWN: {name}</h2>' in html
    assert message.extra_headers["Message-ID"].endswith("@example.org>")


def test_the_message_id_is_stable_across_retries(mailbox, queue_notification, clock):
    from projects.notifications.transports.email import message_id

    notification = queue_notification(mailbox)

    assert message_id(notification.key) == message_id(notification.key)
    assert message_id(notification.key) != message_id(notification.key + "x")


def test_it_delivers_through_a_real_smtp_server(
    mailbox, queue_notification, clock, smtp_server
):
    notification = queue_notification(mailbox, "incident.resolved")

    deliver_due(now=clock.now, config=CONFIG)

    (message,) = smtp_server.messages
    assert message["To"] == "ops@example.com, oncall@example.com"
    assert message["Subject"].startswith("UP again: ")
    kinds = [part.get_content_type() for part in message.walk()]
    assert "text/plain" in kinds
    assert "text/html" in kinds
    notification.refresh_from_db()
    assert notification.state == Notification.State.DELIVERED


def test_recipients_refused_with_550_is_permanent(
    mailbox, queue_notification, clock, smtp_server
):
    smtp_server.handler.refuse_recipients_with = "550 No such user"
    notification = queue_notification(mailbox)

    deliver_due(now=clock.now, config=CONFIG)

    notification.refresh_from_db()
    assert notification.state == Notification.State.FAILED
    assert notification.last_error == "recipients refused (SMTP 550)"
    mailbox.refresh_from_db()
    assert mailbox.failing_since is not None


def test_a_451_from_the_server_is_retried(
    mailbox, queue_notification, clock, smtp_server
):
    smtp_server.handler.refuse_recipients_with = "451 Try again later"
    notification = queue_notification(mailbox)

    deliver_due(now=clock.now, config=CONFIG)

    notification.refresh_from_db()
    assert notification.state == Notification.State.PENDING
    assert notification.attempts == 1


def test_an_unreachable_mail_server_is_retried(
    mailbox, queue_notification, clock, settings
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = 9
    notification = queue_notification(mailbox)

    deliver_due(now=clock.now, config=CONFIG)

    notification.refresh_from_db()
    assert notification.state == Notification.State.PENDING
    assert notification.last_error.startswith("mail server unreachable")

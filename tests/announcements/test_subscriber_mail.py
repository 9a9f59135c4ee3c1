"""A subscriber's mail carries List-Unsubscribe and List-Unsubscribe-Post
(RFC 2369, RFC 8058), read from a real SMTP server, and the one-click
POST a mailbox provider makes (no cookie, no CSRF token) unsubscribes."""

from __future__ import annotations

import re

import pytest

from django.test import Client
from django.utils import timezone

from projects.announcements.announcer import SETTLE, announce
from projects.models import StatusUpdate, Subscriber
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db
CONFIG = DeliveryConfig(digest_seconds=0, timeout_seconds=5)
SITE = "https://status.test"


def deliver() -> None:
    announce(now=lambda: timezone.now() + SETTLE)
    deliver_due(config=CONFIG)


def test_every_subscriber_mail_has_one_click_unsubscribe_headers(smtp_server, settings):
    settings.SITE_URL = SITE
    built = build_page(projects=2, sections=1, days=2)
    Client().post("/status/acme/subscribe/", {"email": "erin@example.com"})
    deliver()
    Subscriber.objects.update(confirmed_at=timezone.now())
    StatusUpdate.objects.create(incident=built.incident, message="A fix is out.")
    deliver()

    token = Subscriber.objects.get().token
    unsubscribe = f"{SITE}/status/acme/unsubscribe/{token}/"
    assert len(smtp_server.messages) == 2  # the confirmation and the update
    for message in smtp_server.messages:
        # A long header may be folded (RFC 5322 2.2.3): read it unfolded.
        assert message["List-Unsubscribe"].strip() == f"<{unsubscribe}>"
        assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"


def test_the_one_click_post_unsubscribes_without_cookie_or_csrf_token(client):
    build_page(projects=2, sections=1, days=2)
    client.post("/status/acme/subscribe/", {"email": "erin@example.com"})
    token = Subscriber.objects.get().token

    response = Client(enforce_csrf_checks=True).post(
        f"/status/acme/unsubscribe/{token}/",
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )

    assert response.status_code == 200
    assert not Subscriber.objects.exists()


def test_an_alert_to_a_teams_mailbox_has_no_unsubscribe_headers(
    smtp_server, make_channel, queue_notification
):
    mailbox = make_channel(kind="email", url="ops@example.com")
    queue_notification(mailbox)

    deliver_due(config=CONFIG)

    (message,) = smtp_server.messages
    assert message["List-Unsubscribe"] is None
    assert re.match(r"<\w+@", message["Message-ID"])

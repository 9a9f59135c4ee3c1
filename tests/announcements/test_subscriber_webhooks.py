"""A status page's webhook subscriber gets every delivery signed as
Standard Webhooks, with a secret of its own shown once, on the page that
confirms the subscription; the spec's reference library verifies them."""

from __future__ import annotations

import re

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from django.test import Client
from django.utils import timezone

from projects.announcements.announcer import SETTLE, announce
from projects.models import Incident, Subscriber
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db
CONFIG = DeliveryConfig(digest_seconds=0, timeout_seconds=5)
SITE = "http://status.test"


def deliver() -> None:
    announce(now=lambda: timezone.now() + SETTLE)
    deliver_due(config=CONFIG)


@pytest.fixture
def page(settings):
    settings.STATUS_WEBHOOK_ALLOW_PRIVATE = True
    settings.SITE_URL = SITE
    return build_page(projects=2, sections=1, days=2, with_incident=False)


def subscribe(receiver) -> str:
    """Subscribes the receiver; returns the secret the page showed."""
    response = Client().post("/status/acme/subscribe/", {"webhook_url": receiver.url()})
    assert response.status_code == 200
    shown = re.findall(r"whsec_[A-Za-z0-9+/=]+", response.content.decode())
    assert len(shown) == 1, "the secret is shown once, on this page"
    return shown[0]


def verified(secret: str, received) -> dict:
    return Webhook(secret).verify(received.body, received.headers)


def test_a_subscribers_webhooks_verify_with_the_secret_shown_once(
    page, webhook_receiver
):
    secret = subscribe(webhook_receiver)
    deliver()
    (confirmation,) = webhook_receiver.requests
    assert verified(secret, confirmation)["event"] == "status.confirm"

    path = confirmation.json()["links"]["confirm"].removeprefix(SITE)
    assert Client(enforce_csrf_checks=True).post(path).status_code == 200
    now = timezone.now()
    Incident.objects.create(project=page.down, started_at=now, confirmed_at=now)
    deliver()

    assert webhook_receiver.events() == ["status.confirm", "status.opened"]
    assert verified(secret, webhook_receiver.requests[-1])["event"] == "status.opened"


def test_each_subscriber_has_a_secret_of_its_own(page, webhook_receiver):
    secrets = [subscribe(webhook_receiver), subscribe(webhook_receiver)]
    deliver()

    assert secrets[0] != secrets[1]
    assert len(webhook_receiver.requests) == 2
    for secret in secrets:
        checked = [verified_or_none(secret, r) for r in webhook_receiver.requests]
        assert checked.count(None) == 1  # its own delivery only


def verified_or_none(secret: str, received):
    try:
        return verified(secret, received)
    except WebhookVerificationError:
        return None


def test_the_secret_is_not_shown_again(page, webhook_receiver):
    secret = subscribe(webhook_receiver)
    subscriber = Subscriber.objects.get()

    pages = [
        "/status/acme/",
        "/status/acme/subscribe/",
        f"/status/acme/subscribe/confirm/{subscriber.token}/",
        f"/status/acme/unsubscribe/{subscriber.token}/",
    ]
    for url in pages:
        assert secret not in Client().get(url).content.decode(), url

"""A project URL's credentials and tokens never leave in a notification:
not in the webhook payload, the e-mail or the Apprise message."""

from __future__ import annotations

import pytest

from django.core import mail

from projects.models import Incident, Notification
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due
from projects.notifications.messages import render
from projects.notifications.payloads import incident_payload
from tests.support.outcomes import T0

CONFIG = DeliveryConfig(digest_seconds=0, timeout_seconds=2)
SECRET_URL = "https://deploy:pa55w0rd@shop.example.com/health?api_key=k3y-123&page=2"
REDACTED = "https://shop.example.com/health?api_key=***&page=2"
SECRETS = ("deploy", "pa55w0rd", "k3y-123")


@pytest.fixture
def incident(make_project):
    project = make_project(url=SECRET_URL)
    return Incident.objects.create(
        project=project, started_at=T0, confirmed_at=T0, first_error="expected 200"
    )


def queue(channel, incident) -> Notification:
    payload = incident_payload("incident.opened", incident, occurred_at=T0)
    return Notification.objects.create(
        event="incident.opened",
        key=f"opened:{incident.pk}:{channel.pk}",
        channel=channel,
        project=incident.project,
        payload=payload,
        created_at=T0,
        next_attempt_at=T0,
    )


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def test_the_payload_carries_the_redacted_url(incident):
    payload = incident_payload("incident.opened", incident, occurred_at=T0)

    assert payload["project"]["url"] == REDACTED


def test_a_webhook_receives_no_credentials(
    incident, make_channel, webhook_receiver, clock
):
    channel = make_channel(url=webhook_receiver.url())
    queue(channel, incident)

    assert deliver_due(now=clock.now, config=CONFIG) == 1

    (request,) = webhook_receiver.requests
    assert request.json()["project"]["url"] == REDACTED
    assert_no_secret(request.body.decode())


def test_an_email_shows_no_credentials(incident, make_channel, clock):
    channel = make_channel(kind="email", url="ops@example.com")
    queue(channel, incident)

    deliver_due(now=clock.now, config=CONFIG)

    (message,) = mail.outbox
    assert f"URL: {REDACTED}" in message.body
    assert_no_secret(message.body)
    assert_no_secret(message.alternatives[0][0])


def test_an_apprise_message_shows_no_credentials(
    incident, make_channel, webhook_receiver, clock
):
    url = f"json://127.0.0.1:{webhook_receiver.port}/apprise"
    channel = make_channel(kind="apprise", url=url)
    queue(channel, incident)

    deliver_due(now=clock.now, config=CONFIG)

    (request,) = webhook_receiver.requests
    assert REDACTED in request.json()["message"]
    assert_no_secret(request.body.decode())


def test_a_payload_queued_before_redaction_renders_without_secrets():
    project = {"id": 1, "name": "shop", "url": SECRET_URL}
    rendered = render(
        {
            "event": "digest",
            "digest": {
                "of": "incident.opened",
                "count": 1,
                "events": [{"project": project, "incident": {}}],
            },
        }
    )
    single = render({"event": "incident.opened", "project": project})

    for text in (rendered.text, rendered.html, single.text, single.html):
        assert_no_secret(text)
    assert REDACTED in single.text

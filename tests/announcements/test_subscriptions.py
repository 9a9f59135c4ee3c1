"""Subscribers: double opt-in by a link in a real e-mail, then exactly one
message per event, through the outbox; webhooks; the form's rate limit
and CSRF protection."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from email.message import Message

import pytest

from django.test import Client
from django.utils import timezone

from projects.announcements import subscriptions
from projects.announcements.announcer import SETTLE, announce
from projects.models import Incident, NotificationChannel, StatusUpdate, Subscriber
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due
from tests.support.smtp_server import SMTPServer
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db
CONFIG = DeliveryConfig(digest_seconds=0, timeout_seconds=5)
SITE = "http://status.test"


@pytest.fixture
def smtp_server(smtp_server, settings):
    """The suite's SMTP server, and links that start with SITE."""
    settings.SITE_URL = SITE
    return smtp_server


def csrf_token(client: Client, path: str) -> str:
    html = client.get(path).content.decode()
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


def subscribe(client: Client, email: str):
    token = csrf_token(client, "/status/acme/subscribe/")
    return client.post(
        "/status/acme/subscribe/", {"email": email, "csrfmiddlewaretoken": token}
    )


def text_of(message: Message) -> str:
    for part in message.walk():
        if part.get_content_type() == "text/plain":
            return part.get_payload(decode=True).decode()
    raise AssertionError("no text part")


def to(server: SMTPServer, address: str) -> list[Message]:
    return [m for m in server.messages if address in m["To"]]


def link(message: Message, name: str) -> str:
    found = re.search(rf"{name}: {re.escape(SITE)}(\S+)", text_of(message))
    return found.group(1)


def settled() -> datetime:
    """A clock far enough ahead that every change made so far has
    settled (see status_announcements.SETTLE)."""
    return timezone.now() + SETTLE


def deliver() -> None:
    announce(now=settled)
    deliver_due(config=CONFIG)


def test_a_confirmed_subscriber_hears_of_each_event_once(smtp_server):
    built = build_page(projects=3, sections=1, days=2, with_incident=False)
    client = Client(enforce_csrf_checks=True)
    assert subscribe(client, "alice@example.com").status_code == 200
    assert subscribe(client, "bob@example.com").status_code == 200
    deliver()
    (confirmation,) = to(smtp_server, "alice@example.com")
    assert confirmation["Subject"] == "Confirm your subscription to Acme status"

    confirm_path = link(confirmation, "Confirm")
    page = client.get(confirm_path)
    assert "Receive news of Acme status" in page.content.decode()
    token = csrf_token(client, confirm_path)
    client.post(confirm_path, {"csrfmiddlewaretoken": token})
    assert Subscriber.objects.get(email="alice@example.com").is_confirmed

    now = timezone.now()
    incident = Incident.objects.create(
        project=built.down, started_at=now, confirmed_at=now
    )
    deliver()
    StatusUpdate.objects.create(incident=incident, message="Looking into it.")
    deliver()
    StatusUpdate.objects.create(
        incident=incident, status="identified", message="Found: a **full disk**."
    )
    deliver()
    # As the writer resolves it: bulk SQL that moves updated_at too.
    now = timezone.now()
    Incident.objects.filter(pk=incident.pk).update(resolved_at=now, updated_at=now)
    deliver()
    deliver()  # again: nothing is queued twice

    subjects = [m["Subject"] for m in to(smtp_server, "alice@example.com")]
    name = built.down.name
    assert subjects == [
        "Confirm your subscription to Acme status",
        f"[Acme status] Incident: {name} is down",
        f"[Acme status] Investigating: {name} is down",
        f"[Acme status] Identified: {name} is down",
        f"[Acme status] Resolved: {name} is down",
    ]
    for message in to(smtp_server, "alice@example.com"):
        assert "Unsubscribe: http://status.test/status/acme/unsubscribe/" in (
            text_of(message)
        )
    assert [m["Subject"] for m in to(smtp_server, "bob@example.com")] == [
        "Confirm your subscription to Acme status"
    ]


def test_an_unsubscribed_address_hears_nothing_more(smtp_server):
    built = build_page(projects=2, sections=1, days=2, with_incident=False)
    client = Client(enforce_csrf_checks=True)
    subscribe(client, "carol@example.com")
    Subscriber.objects.update(confirmed_at=timezone.now())
    deliver()
    (confirmation,) = smtp_server.messages

    leave = link(confirmation, "Unsubscribe")
    client.post(leave, {"csrfmiddlewaretoken": csrf_token(client, leave)})
    now = timezone.now()
    Incident.objects.create(project=built.down, started_at=now, confirmed_at=now)
    deliver()

    assert Subscriber.objects.count() == 0
    assert len(smtp_server.messages) == 1


def confirm_webhook(receiver) -> None:
    """What a receiver does with the confirmation request: a bare POST to
    its confirm link, no cookie, no CSRF token."""
    body = receiver.requests[-1].json()
    assert body["event"] == "status.confirm"
    path = body["links"]["confirm"].removeprefix(SITE)
    assert Client(enforce_csrf_checks=True).post(path).status_code == 200


def test_a_webhook_hears_only_its_confirmation_until_it_confirms(
    client, settings, webhook_receiver
):
    settings.STATUS_WEBHOOK_ALLOW_PRIVATE = True
    settings.SITE_URL = SITE
    built = build_page(projects=2, sections=1, days=2, with_incident=False)
    client.post("/status/acme/subscribe/", {"webhook_url": webhook_receiver.url()})
    now = timezone.now()
    Incident.objects.create(project=built.down, started_at=now, confirmed_at=now)

    deliver()
    deliver()
    assert webhook_receiver.events() == ["status.confirm"]
    assert Subscriber.objects.get().is_confirmed is False

    confirm_webhook(webhook_receiver)
    assert Subscriber.objects.get().is_confirmed is True
    StatusUpdate.objects.create(
        incident=Incident.objects.get(), message="Looking into it."
    )
    deliver()

    assert webhook_receiver.events() == ["status.confirm", "status.update"]
    body = webhook_receiver.requests[-1].json()
    assert body["page"] == {"title": "Acme status", "slug": "acme"}
    assert "unsubscribe" in body["links"]
    assert "confirm" not in body["links"]


def test_a_webhook_to_a_private_address_is_refused(client):
    build_page(projects=1, sections=1, days=1, with_incident=False)

    response = client.post(
        "/status/acme/subscribe/", {"webhook_url": "http://127.0.0.1:8000/admin/"}
    )

    assert "not reachable from here" in response.content.decode()
    assert Subscriber.objects.count() == 0


def test_a_webhook_into_a_blocked_network_is_refused_even_when_private_is_allowed(
    client, settings
):
    settings.STATUS_WEBHOOK_ALLOW_PRIVATE = True
    build_page(projects=1, sections=1, days=1, with_incident=False)

    response = client.post(
        "/status/acme/subscribe/", {"webhook_url": "http://0xa9fea9fe/latest/"}
    )

    assert "not reachable from here" in response.content.decode()
    assert Subscriber.objects.count() == 0


def test_the_form_is_rate_limited_per_address(client, settings):
    settings.STATUS_SUBSCRIBE_RATE_LIMIT = 2
    build_page(projects=1, sections=1, days=1, with_incident=False)

    answers = [
        client.post("/status/acme/subscribe/", {"email": f"u{n}@example.com"})
        for n in range(3)
    ]

    assert [a.status_code for a in answers] == [200, 200, 429]
    assert Subscriber.objects.count() == 2


def test_an_ipv6_client_is_counted_by_its_64(client, settings):
    """S4-13: the limit counted exact addresses; a /64 rotates freely."""
    settings.STATUS_SUBSCRIBE_RATE_LIMIT = 2
    build_page(projects=1, sections=1, days=1, with_incident=False)

    answers = [
        client.post(
            "/status/acme/subscribe/",
            {"email": f"u{n}@example.com"},
            REMOTE_ADDR=f"2001:db8:1:2::{n + 1:x}",
        )
        for n in range(3)
    ]
    elsewhere = client.post(
        "/status/acme/subscribe/",
        {"email": "v@example.com"},
        REMOTE_ADDR="2001:db8:1:3::1",
    )

    assert [a.status_code for a in answers] == [200, 200, 429]
    assert elsewhere.status_code == 200


def test_unconfirmed_subscribers_are_dropped_after_a_day_with_their_channels():
    built = build_page(projects=1, sections=1, days=1, with_incident=False)
    now = timezone.now()
    old = subscriptions.subscribe(
        built.page, email="old@example.com", address=None, now=now - timedelta(hours=25)
    )
    fresh = subscriptions.subscribe(
        built.page, email="new@example.com", address=None, now=now - timedelta(hours=2)
    )
    kept = subscriptions.subscribe(
        built.page, email="yes@example.com", address=None, now=now - timedelta(days=3)
    )
    subscriptions.confirm(kept, now - timedelta(days=3))

    assert subscriptions.prune_unconfirmed(now) == 1

    assert set(Subscriber.objects.values_list("email", flat=True)) == {
        "new@example.com",
        "yes@example.com",
    }
    assert not NotificationChannel.objects.filter(pk=old.channel_id).exists()
    assert NotificationChannel.objects.filter(pk=fresh.channel_id).exists()


def test_the_form_needs_its_csrf_token():
    build_page(projects=1, sections=1, days=1, with_incident=False)
    client = Client(enforce_csrf_checks=True)

    response = client.post("/status/acme/subscribe/", {"email": "x@example.com"})

    assert response.status_code == 403
    assert Subscriber.objects.count() == 0


def test_a_subscriber_hears_of_upcoming_maintenance_once(
    client, webhook_receiver, settings
):
    from datetime import timedelta

    from projects.models import MaintenanceWindow

    settings.STATUS_WEBHOOK_ALLOW_PRIVATE = True
    settings.SITE_URL = SITE
    built = build_page(projects=2, sections=1, days=2, with_incident=False)
    client.post("/status/acme/subscribe/", {"webhook_url": webhook_receiver.url()})
    deliver()
    confirm_webhook(webhook_receiver)
    now = timezone.now()
    window = MaintenanceWindow.objects.create(
        name="Database upgrade",
        starts_at=now + timedelta(days=1),
        ends_at=now + timedelta(days=1, hours=2),
    )
    window.projects.add(built.projects[0])

    deliver()
    deliver()

    _confirmation, received = webhook_receiver.requests
    assert received.json()["event"] == "status.maintenance"
    assert received.json()["title"] == "[Acme status] Maintenance: Database upgrade"


def test_deleting_a_page_removes_its_subscribers_channels(client):
    from projects.models import NotificationChannel, StatusPage

    build_page(projects=1, sections=1, days=1, with_incident=False)
    client.post("/status/acme/subscribe/", {"email": "dan@example.com"})
    assert NotificationChannel.objects.count() == 1

    StatusPage.objects.all().delete()

    assert NotificationChannel.objects.count() == 0


def html_of(message: Message) -> str:
    for part in message.walk():
        if part.get_content_type() == "text/html":
            return part.get_payload(decode=True).decode()
    raise AssertionError("no HTML part")


def test_an_update_arrives_as_plain_text_and_as_safely_rendered_html(smtp_server):
    built = build_page(projects=2, sections=1, days=2)
    subscribe(Client(), "erin@example.com")
    Subscriber.objects.update(confirmed_at=timezone.now())
    StatusUpdate.objects.create(
        incident=built.incident,
        status="identified",
        message="Found: a **full disk**. <script>alert(1)</script> "
        "[more](javascript:alert(1)) and [the runbook](https://example.com/rb)",
    )

    deliver()

    update = next(
        m for m in smtp_server.messages if m["Subject"].startswith("[Acme status] Ide")
    )
    assert update.get_content_type() == "multipart/alternative"
    text, html = text_of(update), html_of(update)
    assert "Found: a **full disk**." in text
    assert "Unsubscribe: http://status.test/status/acme/unsubscribe/" in text
    assert "<strong>full disk</strong>" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html
    assert 'href="javascript' not in html
    assert '<a href="https://example.com/rb">the runbook</a>' in html
    assert 'href="http://status.test/status/acme/unsubscribe/' in html

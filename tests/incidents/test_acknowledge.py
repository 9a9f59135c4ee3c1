"""Acknowledging an incident: on the incidents page, or through the signed
link in a notification."""

from __future__ import annotations

import time

import pytest

from django.core import signing
from django.urls import reverse

from projects.incidents.acknowledge import acknowledge
from projects.models import Incident
from projects.notifications import outbox
from projects.notifications.links import acknowledge_token, acknowledge_url
from tests.support.alerting import assert_acknowledgement_audited, make_channel, queued
from tests.support.outcomes import T0

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(make_project):
    """An open incident whose opening went to one of its two channels."""
    project = make_project(name="shop")
    told, later = make_channel(), make_channel()
    project.channels.add(told)
    incident = Incident.objects.create(
        project=project, started_at=T0, confirmed_at=T0, first_error="refused"
    )
    outbox.queue_for_projects(
        [
            outbox.Message(
                event="incident.opened",
                key=outbox.message_key("incident.opened", incident.pk),
                payload={},
                project_id=project.pk,
                incident_id=incident.pk,
            )
        ]
    )
    project.channels.add(later)
    incident.told = told
    return incident


def test_it_tells_the_channels_that_heard_of_it_once(incident, admin_user):
    assert acknowledge(incident.pk, by=admin_user) is True
    assert acknowledge(incident.pk, by=admin_user) is False

    assert queued(event="incident.acknowledged") == [
        ("incident.acknowledged", "pending")
    ]
    notification = incident.notifications.get(event="incident.acknowledged")
    assert notification.channel_id == incident.told.pk
    assert notification.payload["incident"]["acknowledged_by"] == "admin"
    assert "acknowledge" not in notification.payload["links"]
    incident.refresh_from_db()
    assert incident.acknowledged_by == admin_user


def test_a_resolved_incident_cannot_be_acknowledged(incident):
    Incident.objects.filter(pk=incident.pk).update(resolved_at=T0)

    assert acknowledge(incident.pk) is False
    assert queued(event="incident.acknowledged") == []


def test_the_incidents_page_acknowledges_with_a_button(admin_client, incident):
    page = reverse("incidents:list")
    response = admin_client.post(
        reverse("incidents:acknowledge", args=[incident.pk]), {"next": page}
    )

    assert response.status_code == 302
    assert response.url == page
    incident.refresh_from_db()
    assert incident.acknowledged_at is not None
    assert "admin" in admin_client.get(page).content.decode()


def test_the_button_leaves_an_audit_entry_by_the_user(admin_client, incident):
    admin_client.post(reverse("incidents:acknowledge", args=[incident.pk]))

    assert_acknowledgement_audited(incident, actor_name="admin", via="dashboard")


def test_the_button_needs_a_login_and_a_post(client, admin_client, incident):
    url = reverse("incidents:acknowledge", args=[incident.pk])

    assert client.post(url).status_code == 302
    assert admin_client.get(url).status_code == 405
    incident.refresh_from_db()
    assert incident.acknowledged_at is None


def test_it_never_redirects_elsewhere(admin_client, incident):
    response = admin_client.post(
        reverse("incidents:acknowledge", args=[incident.pk]),
        {"next": "https://evil.example/"},
    )

    assert response.url == reverse("incidents:list")


def test_a_valid_link_asks_first_then_acknowledges(client, incident):
    url = acknowledge_url(incident.pk)
    path = url.removeprefix("http://127.0.0.1:8000")

    asked = client.get(path)
    assert asked.status_code == 200
    assert "Acknowledge: I am on it" in asked.content.decode()
    incident.refresh_from_db()
    assert incident.acknowledged_at is None  # a mail scanner's GET does nothing

    done = client.post(path)
    assert done.status_code == 200
    assert "Acknowledged." in done.content.decode()
    incident.refresh_from_db()
    assert incident.acknowledged_at is not None
    assert incident.acknowledged_by is None
    assert queued(event="incident.acknowledged") == [
        ("incident.acknowledged", "pending")
    ]


def signed_days_ago(days: float, monkeypatch) -> None:
    """Make the signer date its signatures `days` in the past."""
    then = int(time.time() - days * 86400)
    monkeypatch.setattr(
        signing.TimestampSigner, "timestamp", lambda self: signing.b62_encode(then)
    )


def test_an_expired_link_does_nothing(client, incident, settings, monkeypatch):
    settings.ACKNOWLEDGE_LINK_DAYS = 7
    with monkeypatch.context() as patched:
        signed_days_ago(7.01, patched)
        token = acknowledge_token(incident.pk)

    response = client.post(reverse("incidents:acknowledge_link", args=[token]))

    assert response.status_code == 410
    assert "expired" in response.content.decode()
    incident.refresh_from_db()
    assert incident.acknowledged_at is None


def test_a_link_works_until_it_expires(client, incident, settings, monkeypatch):
    settings.ACKNOWLEDGE_LINK_DAYS = 7
    with monkeypatch.context() as patched:
        signed_days_ago(6.99, patched)
        token = acknowledge_token(incident.pk)

    response = client.post(reverse("incidents:acknowledge_link", args=[token]))

    assert response.status_code == 200
    incident.refresh_from_db()
    assert incident.acknowledged_at is not None


@pytest.mark.parametrize(
    "tamper",
    [
        lambda token: token[:-1] + ("A" if token[-1] != "A" else "B"),
        lambda token: token.replace(token.split(":")[0], "eyJpbmNpZGVudCI6OTl9"),
        lambda token: "nonsense",
    ],
)
def test_a_tampered_link_does_nothing(client, incident, tamper):
    path = reverse(
        "incidents:acknowledge_link", args=[tamper(acknowledge_token(incident.pk))]
    )

    response = client.post(path)

    assert response.status_code == 404
    incident.refresh_from_db()
    assert incident.acknowledged_at is None


def test_a_link_to_a_gone_incident_is_not_found(client, incident):
    path = reverse("incidents:acknowledge_link", args=[acknowledge_token(10**9)])

    assert client.get(path).status_code == 404


def test_links_sent_before_the_links_module_moved_still_work(client, incident):
    # Signed as every link was since the first release: this salt, this
    # payload. Changing either would void the links in people's inboxes.
    token = signing.TimestampSigner(salt="projects.incidents.acknowledge").sign_object(
        {"incident": incident.pk}
    )

    response = client.post(reverse("incidents:acknowledge_link", args=[token]))

    assert response.status_code == 200
    incident.refresh_from_db()
    assert incident.acknowledged_at is not None

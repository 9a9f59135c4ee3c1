"""Outbound requests are guarded like polls (S4-03, S4-11, S4-13): webhook
and Apprise channels of an untrusted team and subscribers' webhooks never
connect into POLL_BLOCKED_NETWORKS, whatever the URL names (an address, a
name that resolves there, a redirect that leads there); last_error says
only that the address was refused. Every receiver here is on 127.0.0.1."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from projects.announcements.subscriptions import validate_webhook_url
from projects.models import (
    ApiKey,
    Notification,
    NotificationChannel,
    StatusPage,
    Subscriber,
    Team,
)
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due
from projects.notifications.forms import ChannelForm
from projects.notifications.outbound_guard import Guard, subscriber_guard
from projects.teams.forms import team_form

pytestmark = pytest.mark.django_db

CONFIG = DeliveryConfig(digest_seconds=0, timeout_seconds=2)
REFUSED = "127.0.0.1 is in a blocked network (POLL_BLOCKED_NETWORKS)"


@pytest.fixture
def guests(db):
    return Team.objects.create(name="Guests", slug="guests")


@pytest.fixture
def operators(db):
    return Team.objects.create(name="Ops", slug="ops", trusted=True)


def delivered(channel, queue_notification, clock) -> Notification:
    notification = queue_notification(channel)
    deliver_due(now=clock.now, config=CONFIG)
    notification.refresh_from_db()
    return notification


def test_the_default_blocks_private_loopback_link_local_cgnat_ula_and_metadata(
    settings,
):
    guard = Guard.of(settings.POLL_BLOCKED_NETWORKS)

    for address in [
        "127.0.0.1",
        "::1",
        "0.0.0.0",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.10",
        "100.64.0.1",
        "169.254.169.254",
        "fe80::1",
        "fd12:3456::1",
        "fd00:ec2::254",
        "100.100.100.200",
        "::ffff:192.168.1.10",
    ]:
        assert guard.refusal(address), address
    assert guard.refusal("192.0.2.1") == ""
    assert guard.refusal("2001:db8::1") == ""


def test_an_untrusted_teams_webhook_never_reaches_a_blocked_address(
    guests, webhook_receiver, queue_notification, clock
):
    channel = NotificationChannel.objects.create(
        team=guests, name="c", kind="webhook", url=webhook_receiver.url()
    )

    notification = delivered(channel, queue_notification, clock)

    assert webhook_receiver.requests == []
    assert notification.state == Notification.State.FAILED
    assert notification.last_error == REFUSED
    channel.refresh_from_db()
    assert channel.last_error == REFUSED


def test_a_name_is_checked_on_what_it_resolves_to_when_sending(
    guests, webhook_receiver, queue_notification, clock
):
    url = f"http://localhost:{webhook_receiver.port}/hook"
    channel = NotificationChannel.objects.create(
        team=guests, name="c", kind="webhook", url=url
    )

    notification = delivered(channel, queue_notification, clock)

    assert webhook_receiver.requests == []
    assert "is in a blocked network (POLL_BLOCKED_NETWORKS)" in notification.last_error


def test_a_trusted_teams_webhook_reaches_its_own_network(
    operators, webhook_receiver, queue_notification, clock
):
    channel = NotificationChannel.objects.create(
        team=operators, name="c", kind="webhook", url=webhook_receiver.url()
    )

    notification = delivered(channel, queue_notification, clock)

    assert len(webhook_receiver.requests) == 1
    assert notification.state == Notification.State.DELIVERED


def test_an_untrusted_teams_apprise_channel_is_refused_at_connect_time(
    guests, webhook_receiver, queue_notification, clock
):
    url = f"json://127.0.0.1:{webhook_receiver.port}/apprise"
    channel = NotificationChannel.objects.create(
        team=guests, name="c", kind="apprise", url=url
    )

    notification = delivered(channel, queue_notification, clock)

    assert webhook_receiver.requests == []
    assert notification.last_error == REFUSED


def test_an_apprise_redirect_into_a_blocked_network_is_refused(
    operators, guests, target_server, queue_notification, clock, settings
):
    """The receiver is allowed, where it redirects is not (127.0.0.2
    stands for 169.254.169.254)."""
    settings.POLL_BLOCKED_NETWORKS = ["127.0.0.2/32"]
    inside = "http://127.0.0.2:9/latest/meta-data/"
    url = f"json://127.0.0.1:{target_server.port}/redirect-to?-location={inside}"
    channel = NotificationChannel.objects.create(
        team=guests, name="c", kind="apprise", url=url
    )

    notification = delivered(channel, queue_notification, clock)

    assert target_server.count("/redirect-to") == 1
    assert notification.last_error == (
        "127.0.0.2 is in a blocked network (POLL_BLOCKED_NETWORKS)"
    )


def test_an_untrusted_team_may_not_use_apprise_services_that_skip_http(
    guests, queue_notification, clock
):
    channel = NotificationChannel.objects.create(
        team=guests, name="c", kind="apprise", url="mailto://user:pass@example.com"
    )

    notification = delivered(channel, queue_notification, clock)

    assert notification.state == Notification.State.FAILED
    assert "only services that send over HTTP" in notification.last_error


def channel_form(team, **data) -> ChannelForm:
    form_class = team_form(ChannelForm, team)
    defaults = {"name": "c", "kind": "webhook", "reminder_minutes": 0}
    return form_class(data={**defaults, **data})


@pytest.mark.parametrize(
    ("kind", "url"),
    [
        ("webhook", "http://169.254.169.254/latest/meta-data/"),
        ("webhook", "http://2852039166/"),
        ("webhook", "http://[::ffff:10.0.0.1]/"),
        ("webhook", "http://127.0.0.1:8765/reload"),
        ("apprise", "json://127.0.0.1:18499/apprise-ssrf"),
        ("apprise", "mailto://user:pass@example.com"),
    ],
)
def test_an_untrusted_team_cannot_save_such_a_channel(guests, operators, kind, url):
    refused = channel_form(guests, kind=kind, url=url)
    trusted = channel_form(operators, kind=kind, url=url)

    assert not refused.is_valid()
    assert "POLL_BLOCKED_NETWORKS" in refused.errors["url"][0]
    assert trusted.is_valid(), trusted.errors


def test_an_untrusted_teams_write_key_cannot_aim_a_channel_inside(guests):
    """The review's reproduction: 201, then the test request went out."""
    _, key = ApiKey.issue("guests", "write", guests)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    response = client.post(
        "/api/v1/channels/",
        {"name": "c", "kind": "webhook", "url": "http://169.254.169.254/latest/"},
        format="json",
    )

    assert response.status_code == 400
    assert "POLL_BLOCKED_NETWORKS" in str(response.json())
    assert not NotificationChannel.objects.filter(team=guests).exists()


def test_an_apprise_token_in_the_host_is_not_read_as_an_address(guests):
    form = channel_form(guests, kind="apprise", url="tgram://123456789:AAHtoken/42")

    assert form.is_valid(), form.errors


def test_a_subscribers_webhook_is_guarded_even_for_a_trusted_team(
    webhook_receiver, queue_notification, clock
):
    page = StatusPage.objects.create(title="Shop", slug="shop")  # Default: trusted
    subscriber = Subscriber.objects.create(
        page=page, webhook_url=webhook_receiver.url()
    )
    subscriber.channel = NotificationChannel.objects.create(
        name="s", kind="webhook", url=subscriber.webhook_url
    )
    subscriber.save()

    notification = delivered(subscriber.channel, queue_notification, clock)

    assert webhook_receiver.requests == []
    assert notification.last_error == REFUSED


def test_allowing_private_subscriber_webhooks_keeps_metadata_blocked(settings):
    guard = subscriber_guard(settings.POLL_BLOCKED_NETWORKS, allow_private=True)

    assert guard.refusal("127.0.0.1") == guard.refusal("192.168.1.1") == ""
    for address in ["169.254.169.254", "fe80::1", "fd00:ec2::254", "100.100.100.200"]:
        assert guard.refusal(address), address
    settings.STATUS_WEBHOOK_ALLOW_PRIVATE = True
    with pytest.raises(Exception, match="not reachable"):
        validate_webhook_url("http://169.254.169.254/")
    validate_webhook_url("http://127.0.0.1:9/hook")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://0177.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://localhost./",
        "http://[::1]/",
        "http://0.0.0.0/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://169.254.169.254/",
        "http://[fd00:ec2::254]/",
    ],
)
def test_a_subscribers_webhook_naming_an_inside_address_is_refused(url):
    with pytest.raises(Exception, match="not reachable"):
        validate_webhook_url(url)

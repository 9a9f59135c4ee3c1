"""Channels in the admin: per-kind validation as field errors, masked URL
and secret, default channels, the test action, and the delivery log."""

from __future__ import annotations

import pytest

from django.urls import reverse
from django.utils import timezone

from projects.announcements.subscriptions import subscribe
from projects.models import (
    DeliveryAttempt,
    Notification,
    NotificationChannel,
    Project,
    StatusPage,
)

pytestmark = pytest.mark.django_db

ADD_URL = reverse("admin:projects_notificationchannel_add")
LIST_URL = reverse("admin:projects_notificationchannel_changelist")
LOG_URL = reverse("admin:projects_deliveryattempt_changelist")

FORM = {
    "name": "ops hook",
    "kind": "webhook",
    "url": "https://hooks.example.com/services/T000/B000/XXXXsecretpath",
    "secret": "",
    "enabled": "on",
    "send_resolved": "on",
    "reminder_minutes": "0",
}


def change_url(channel) -> str:
    return reverse("admin:projects_notificationchannel_change", args=[channel.pk])


def field_errors(response, field: str) -> list[str]:
    return response.context["adminform"].form.errors.get(field, [])


def test_a_new_webhook_gets_a_secret_shown_once(admin_client):
    response = admin_client.post(ADD_URL, FORM, follow=True)

    channel = NotificationChannel.objects.get()
    assert channel.secret.startswith("whsec_")
    shown = [str(m) for m in response.context["messages"]]
    assert any(channel.secret in message for message in shown)


def test_the_change_page_never_shows_the_url_or_secret(admin_client, make_channel):
    channel = make_channel(url=FORM["url"])

    page = admin_client.get(change_url(channel)).content.decode()

    assert "XXXXsecretpath" not in page
    assert channel.secret not in page
    assert "https://hooks.example.com/•••" in page


def test_the_list_shows_the_destination_masked(admin_client, make_channel):
    make_channel(url=FORM["url"])

    page = admin_client.get(LIST_URL).content.decode()

    assert "XXXXsecretpath" not in page
    assert "hooks.example.com" in page


def test_saving_with_empty_url_and_secret_keeps_them(admin_client, make_channel):
    channel = make_channel(url=FORM["url"])
    secret = channel.secret

    response = admin_client.post(
        change_url(channel), {**FORM, "name": "renamed", "url": ""}
    )

    assert response.status_code == 302
    channel.refresh_from_db()
    assert (channel.name, channel.url, channel.secret) == (
        "renamed",
        FORM["url"],
        secret,
    )


@pytest.mark.parametrize(
    ("kind", "url", "message"),
    [
        ("webhook", "ftp://example.com/hook", "starts with http:// or https://"),
        ("webhook", "https:///nohost", "has no host name"),
        ("email", "ops@example.com, not-an-address", "“not-an-address” is not"),
        ("email", " , ", "at least one e-mail address"),
        ("apprise", "nosuchservice://token", "Apprise does not understand"),
    ],
)
def test_a_bad_url_for_its_kind_is_a_field_error(admin_client, kind, url, message):
    response = admin_client.post(ADD_URL, {**FORM, "kind": kind, "url": url})

    assert response.status_code == 200
    assert any(message in error for error in field_errors(response, "url"))
    assert not NotificationChannel.objects.exists()


def test_a_malformed_secret_is_a_field_error(admin_client):
    response = admin_client.post(ADD_URL, {**FORM, "secret": "hunter2"})

    assert any("whsec_" in error for error in field_errors(response, "secret"))


def test_reminders_more_often_than_every_5_minutes_are_refused(admin_client):
    response = admin_client.post(ADD_URL, {**FORM, "reminder_minutes": "2"})

    assert field_errors(response, "reminder_minutes")


def test_valid_email_and_apprise_channels_save(admin_client):
    admin_client.post(
        ADD_URL, {**FORM, "name": "mail", "kind": "email", "url": "a@b.example"}
    )
    admin_client.post(
        ADD_URL,
        {**FORM, "name": "ntfy", "kind": "apprise", "url": "ntfy://ntfy.sh/topic"},
    )

    kinds = dict(NotificationChannel.objects.values_list("name", "kind"))
    assert kinds == {"mail": "email", "ntfy": "apprise"}
    assert set(NotificationChannel.objects.values_list("secret", flat=True)) == {""}


def test_default_channels_are_attached_to_new_projects(make_channel, make_project):
    default = make_channel(is_default=True)
    make_channel(is_default=False)

    project = make_project()

    assert list(project.channels.all()) == [default]


def test_the_project_form_preselects_default_channels(admin_client, make_channel):
    default = make_channel(is_default=True)
    other = make_channel()

    form = (
        admin_client.get(reverse("admin:projects_project_add"))
        .context["adminform"]
        .form
    )

    assert form.initial["channels"] == [default.pk]
    assert other.pk not in form.initial["channels"]


def test_a_project_saved_in_the_admin_keeps_the_chosen_channels(
    admin_client, make_channel
):
    from tests.support.admin_forms import ADD_URL as PROJECT_ADD_URL
    from tests.support.admin_forms import FORM as PROJECT_FORM

    make_channel(is_default=True)
    chosen = make_channel()

    admin_client.post(PROJECT_ADD_URL, {**PROJECT_FORM, "channels": [chosen.pk]})

    assert list(Project.objects.get().channels.all()) == [chosen]


def test_the_test_action_shows_the_result_inline(
    admin_client, make_channel, webhook_receiver, target_server
):
    good = make_channel(name="good", url=webhook_receiver.url("/ok"))
    bad = make_channel(name="bad", url=target_server.url("/status/404"))

    response = admin_client.post(
        LIST_URL,
        {"action": "send_test_notification", "_selected_action": [good.pk, bad.pk]},
        follow=True,
    )

    shown = sorted(str(m) for m in response.context["messages"])
    assert shown[0] == "Test to “bad”: failed: HTTP 404 Not Found"
    assert shown[1].startswith("Test to “good”: delivered (HTTP 200) in ")
    assert webhook_receiver.events() == ["test"]
    assert DeliveryAttempt.objects.count() == 2


def test_the_delivery_log_lists_attempts(admin_client, make_channel, webhook_receiver):
    channel = make_channel(name="log me", url=webhook_receiver.url())
    admin_client.post(
        LIST_URL, {"action": "send_test_notification", "_selected_action": [channel.pk]}
    )

    page = admin_client.get(LOG_URL).content.decode()

    assert "log me" in page
    assert "Delivered" in page


def test_a_notifications_payload_never_shows_a_subscribers_token(admin_client):
    """S4-10: the confirm and unsubscribe links carry the token."""
    page = StatusPage.objects.create(title="Shop", slug="shop")
    subscriber = subscribe(
        page, email="ann@example.test", address=None, now=timezone.now()
    )
    notification = Notification.objects.get(channel=subscriber.channel)
    change = reverse("admin:projects_notification_change", args=[notification.pk])

    html = admin_client.get(change).content.decode()

    assert subscriber.token not in html
    assert "Confirm your subscription to Shop" in html
    assert "&quot;confirm&quot;: &quot;•••&quot;" in html

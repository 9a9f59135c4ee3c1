"""Every link in an e-mail starts with SITE_URL, whatever Host the request
that caused it named: any ALLOWED_HOSTS name works as a Host, a team's own
status-page domain among them, and that team controls its DNS. A reset
link on its name would hand it the key."""

from __future__ import annotations

import re

import pytest

from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from projects.models import Notification, Role, Subscriber
from projects.notifications.account_mail import deliver_account_mail
from projects.notifications.links import acknowledge_url
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db
SITE = "https://monitor.example.com"
TEAM_DOMAIN = "status.alpha.test"


@pytest.fixture(autouse=True)
def hosts(settings):
    settings.SITE_URL = SITE
    settings.ALLOWED_HOSTS = ["monitor.example.com", TEAM_DOMAIN, "testserver"]
    cache.clear()  # the map of custom domains
    yield
    cache.clear()


def links_in(text: str) -> list[str]:
    return re.findall(r"https?://[^\s\"'<>]+", text)


def test_a_password_reset_link_starts_with_site_url_whatever_the_host(a):
    user = member(a.team, Role.VIEWER, "vera")

    Client().post(
        reverse("account_reset_password"),
        {"email": user.email},
        HTTP_HOST=TEAM_DOMAIN,
    )
    deliver_account_mail()

    (message,) = mail.outbox
    html = "".join(content for content, _ in getattr(message, "alternatives", []))
    links = links_in(message.body) + links_in(html)
    assert any("/password/reset/key/" in link for link in links), links
    assert all(link.startswith(SITE + "/") for link in links), links
    assert TEAM_DOMAIN not in message.body


def test_an_invitation_link_starts_with_site_url_whatever_the_host(a):
    manager = client_of(member(a.team, Role.MANAGER, "mona"))

    manager.post(
        reverse("teams:invite"),
        {"email": "new@example.test", "role": Role.VIEWER},
        HTTP_HOST=TEAM_DOMAIN,
    )
    deliver_account_mail()

    (message,) = mail.outbox
    links = links_in(message.body)
    assert links, message.body
    assert all(link.startswith(SITE + "/") for link in links), links


def test_a_subscription_confirm_link_starts_with_site_url_on_a_custom_domain(a):
    a.page.custom_domain = TEAM_DOMAIN
    a.page.visibility = a.page.Visibility.PUBLIC
    a.page.save()

    Client().post("/subscribe/", {"email": "erin@example.test"}, HTTP_HOST=TEAM_DOMAIN)

    subscriber = Subscriber.objects.get(email="erin@example.test")
    payload = Notification.objects.get(channel=subscriber.channel).payload
    assert payload["links"]["confirm"].startswith(f"{SITE}/status/")
    assert payload["links"]["unsubscribe"].startswith(f"{SITE}/status/")


def test_an_acknowledge_link_starts_with_site_url(a):
    assert acknowledge_url(a.incident.pk).startswith(f"{SITE}/incidents/")

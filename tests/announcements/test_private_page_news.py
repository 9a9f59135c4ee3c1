"""A private page's news goes only to subscribers who are members of its
team when it is sent: someone removed from the team stops hearing of it,
though their subscription was made while they belonged."""

from __future__ import annotations

import pytest

from django.utils import timezone

from projects.announcements import subscriptions
from projects.announcements.announcer import SETTLE, announce
from projects.models import Membership, Notification, Role, StatusUpdate, Subscriber
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db


def subscribed(client, page, email: str) -> Subscriber:
    """Subscribes through the form and confirms through the link, signed in."""
    url = f"/status/{page.slug}/subscribe/"
    assert client.post(url, {"email": email}).status_code == 200
    subscriber = Subscriber.objects.get(email=email)
    confirm = f"/status/{page.slug}/subscribe/confirm/{subscriber.token}/"
    assert client.post(confirm).status_code == 200
    subscriber.refresh_from_db()
    assert subscriber.is_confirmed
    return subscriber


def news_for(subscriber: Subscriber) -> list[str]:
    return list(
        Notification.objects.filter(channel=subscriber.channel_id)
        .exclude(event="status.confirm")
        .values_list("event", flat=True)
    )


def post_update(incident) -> None:
    StatusUpdate.objects.create(incident=incident, message="A fix is out.")
    announce(now=lambda: timezone.now() + SETTLE)


def test_a_member_removed_from_the_team_hears_no_more_of_its_private_page(a, b):
    vera = member(a.team, Role.VIEWER, "vera")
    walt = member(a.team, Role.VIEWER, "walt")
    veras = subscribed(client_of(vera), a.page, "vera@example.test")
    walts = subscribed(client_of(walt), a.page, "walt@example.test")
    assert veras.user == vera

    Membership.objects.filter(user=vera).delete()
    post_update(a.incident)

    assert news_for(walts) == ["status.update"]
    assert news_for(veras) == []


def test_a_private_pages_subscriber_with_no_account_hears_nothing(a, b):
    now = timezone.now()
    made = subscriptions.subscribe(
        a.page, email="old@example.test", address=None, now=now
    )
    Subscriber.objects.filter(pk=made.pk).update(confirmed_at=now)

    post_update(a.incident)

    assert news_for(made) == []


def test_a_public_pages_subscribers_need_no_account(a, b):
    a.page.visibility = a.page.Visibility.PUBLIC
    a.page.save()
    now = timezone.now()
    made = subscriptions.subscribe(
        a.page, email="anyone@example.test", address=None, now=now
    )
    Subscriber.objects.filter(pk=made.pk).update(confirmed_at=now)

    post_update(a.incident)

    assert news_for(made) == ["status.update"]

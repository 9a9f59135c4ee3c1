"""The announcer reads only what appeared since its last run (its
high-water mark in the database): a run with nothing new offers nothing
and costs the same few queries whatever the subscribers and past events;
a change still settling is read by the next run; maintenance is announced
as it comes within a week."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from projects.announcements.announcer import SETTLE, announce
from projects.announcements.subscriptions import subscribe
from projects.models import MaintenanceWindow, Notification, StatusUpdate, Subscriber
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db
SUBSCRIBERS = 5


def subscribers(page, count: int = SUBSCRIBERS) -> None:
    """Confirmed subscribers from before the page's events."""
    long_ago = timezone.now() - timedelta(days=2)
    for n in range(count):
        subscribe(page, email=f"s{n}@example.com", address=None, now=long_ago)
    Subscriber.objects.update(confirmed_at=long_ago)


def at(moment):
    return lambda: moment


def test_a_run_with_nothing_new_offers_nothing_and_costs_a_few_queries():
    built = build_page(projects=3, sections=1, days=2)  # opened + 2 updates
    subscribers(built.page)
    now = timezone.now() + SETTLE
    assert announce(now=at(now)) == 3 * SUBSCRIBERS

    with CaptureQueriesContext(connection) as queries:
        offered = announce(now=at(timezone.now() + SETTLE))

    assert offered == 0
    # The mark, three looks for anything new, moving the mark.
    assert len(queries) <= 5
    StatusUpdate.objects.create(incident=built.incident, message="Fixed soon.")
    assert announce(now=at(timezone.now() + SETTLE)) == SUBSCRIBERS


def test_a_change_still_settling_is_read_by_the_next_run():
    built = build_page(projects=3, sections=1, days=2, with_incident=False)
    subscribers(built.page, 1)
    announce(now=at(timezone.now() + SETTLE))
    window = MaintenanceWindow.objects.create(
        name="Upgrade",
        starts_at=timezone.now() + timedelta(days=1),
        ends_at=timezone.now() + timedelta(days=1, hours=1),
    )
    window.projects.add(built.projects[0])
    saved = MaintenanceWindow.objects.get().updated_at

    assert announce(now=at(saved + SETTLE / 2)) == 0
    assert announce(now=at(saved + SETTLE)) == 1
    assert announce(now=at(saved + SETTLE * 3)) == 0


def test_maintenance_is_announced_once_as_it_comes_within_a_week():
    built = build_page(projects=3, sections=1, days=2, with_incident=False)
    subscribers(built.page, 1)
    now = timezone.now() + SETTLE
    window = MaintenanceWindow.objects.create(
        name="Move", starts_at=now + timedelta(days=9), ends_at=now + timedelta(days=9)
    )
    window.projects.add(built.projects[0])
    MaintenanceWindow.objects.update(updated_at=now - timedelta(days=3))

    offered = [announce(now=at(now + timedelta(days=d))) for d in (0, 1, 2, 2.5, 3)]

    # It comes within a week (less SETTLE) between days 2 and 2.5.
    assert offered == [0, 0, 0, 1, 0]
    assert Notification.objects.filter(event="status.maintenance").count() == 1


def test_a_new_subscriber_hears_of_maintenance_announced_before_it_confirmed(client):
    built = build_page(projects=3, sections=1, days=2, with_incident=False)
    window = MaintenanceWindow.objects.create(
        name="Upgrade",
        starts_at=timezone.now() + timedelta(days=1),
        ends_at=timezone.now() + timedelta(days=1, hours=1),
    )
    window.projects.add(built.projects[0])
    announce(now=at(timezone.now() + SETTLE))
    subscriber = subscribe(
        built.page, email="late@example.com", address=None, now=timezone.now()
    )

    client.post(f"/status/acme/subscribe/confirm/{subscriber.token}/")
    client.post(
        f"/status/acme/subscribe/confirm/{subscriber.token}/"
    )  # again: nothing more
    announce(now=at(timezone.now() + SETTLE))

    events = Notification.objects.values_list("event", flat=True).order_by("id")
    assert list(events) == ["status.confirm", "status.maintenance"]

"""Domain incidents from what the registry says: one warning per expiry
date and project, notified once, resolved when the date moves."""

from __future__ import annotations

from datetime import datetime, timedelta
from io import StringIO

import pytest

from django.core.management import call_command

from projects.domains.lookups import keep_rows_for, look_up_due
from projects.domains.tasks import check_domains
from projects.domains.warnings import warn_of_domains
from projects.domains.watched import watchers
from projects.models import Incident, Notification, NotificationChannel, Project

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)
DOMAIN = Incident.Kind.DOMAIN


def iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def run(now: datetime):
    keep_rows_for({w.domain for w in watchers() if w.domain}, now)
    look_up_due(now=now)
    return warn_of_domains(now)


@pytest.fixture
def channel(db):
    return NotificationChannel.objects.create(
        name="ops", kind="webhook", url="https://hooks.example.com/x", is_default=True
    )


@pytest.fixture
def shop(make_project, channel):
    return make_project(
        name="shop", url="https://shop.example.co.uk/", domain_expiry_warning_days=30
    )


def notices() -> list[tuple[str, str]]:
    return [
        (n.event, n.payload["message"]) for n in Notification.objects.order_by("pk")
    ]


def test_a_domain_expiring_within_the_warning_days_opens_one_incident_once(
    rdap, shop, now
):
    expires = now + 10 * DAY
    rdap.register("example.co.uk", expires=iso(expires))

    opened = run(now)
    run(now + timedelta(hours=1))
    run(now + 2 * DAY)

    assert str(opened) == "domain warnings: 1 opened, 0 resolved"
    incident = Incident.objects.get()
    assert incident.kind == DOMAIN
    assert incident.project == shop
    assert incident.domain == "example.co.uk"
    assert incident.domain_expires_at == expires
    assert incident.first_error == (
        f"domain example.co.uk expires in 10 days ({expires:%Y-%m-%d %H:%M} UTC)"
    )
    assert notices() == [
        (
            "incident.opened",
            f"shop: the domain example.co.uk expires in 10 days "
            f"({expires:%Y-%m-%d %H:%M} UTC). Renew it at its registrar.",
        )
    ]
    shop.refresh_from_db()
    assert shop.domain_expires_at == expires


def test_it_resolves_when_the_registry_shows_a_later_date(rdap, shop, now):
    rdap.register("example.co.uk", expires=iso(now + 10 * DAY))
    run(now)
    renewed = now + 375 * DAY
    rdap.register("example.co.uk", expires=iso(renewed))

    resolved = run(now + DAY)

    assert str(resolved) == "domain warnings: 0 opened, 1 resolved"
    incident = Incident.objects.get()
    assert incident.resolved_at == now + DAY
    assert notices()[-1] == (
        "incident.resolved",
        f"shop: example.co.uk is renewed, now until {renewed:%Y-%m-%d %H:%M} UTC.",
    )
    shop.refresh_from_db()
    assert shop.domain_expires_at == renewed


def test_a_renewal_that_is_still_soon_warns_of_the_new_date(rdap, shop, now):
    rdap.register("example.co.uk", expires=iso(now + 10 * DAY))
    run(now)
    rdap.register("example.co.uk", expires=iso(now + 25 * DAY))

    run(now + DAY)

    first, second = Incident.objects.order_by("pk")
    assert first.resolved_at == now + DAY
    assert second.resolved_at is None
    assert second.domain_expires_at == now + 25 * DAY
    assert [event for event, _ in notices()] == [
        "incident.opened",
        "incident.resolved",
        "incident.opened",
    ]


def test_a_date_beyond_the_warning_days_opens_nothing(rdap, shop, now):
    rdap.register("example.co.uk", expires=iso(now + 31 * DAY))

    run(now)

    assert Incident.objects.exists() is False
    shop.refresh_from_db()
    assert shop.domain_expires_at == now + 31 * DAY


def test_an_expired_domain_says_so(rdap, shop, now):
    expired = now - 2 * DAY
    rdap.register("example.co.uk", expires=iso(expired))

    run(now)

    assert Incident.objects.get().first_error == (
        f"domain example.co.uk expired on {expired:%Y-%m-%d %H:%M} UTC"
    )


def test_every_project_under_the_domain_gets_its_own_warning(
    rdap, shop, make_project, now
):
    make_project(url="icmp://router.example.co.uk", domain_expiry_warning_days=30)
    make_project(url="https://www.example.co.uk/", domain_expiry_warning_days=5)
    rdap.register("example.co.uk", expires=iso(now + 10 * DAY))

    run(now)

    # The third warns at 5 days, not yet.
    assert Incident.objects.filter(kind=DOMAIN).count() == 2
    assert rdap.asked("example.co.uk") == 1


def test_a_paused_project_is_not_warned(rdap, make_project, channel, now):
    make_project(
        url="https://example.co.uk/", domain_expiry_warning_days=30, enabled=False
    )
    rdap.register("example.co.uk", expires=iso(now + 10 * DAY))

    run(now)

    assert Incident.objects.exists() is False


def test_turning_the_warning_off_resolves_the_incident_at_once(rdap, shop, now):
    rdap.register("example.co.uk", expires=iso(now + 10 * DAY))
    run(now)

    shop.domain_expiry_warning_days = None
    shop.save()

    assert Incident.objects.get().resolved_at is not None
    shop.refresh_from_db()
    assert shop.domain_expires_at is None
    assert notices()[-1] == (
        "incident.resolved",
        "shop: the registration of example.co.uk is not watched any more.",
    )


def test_moving_the_project_to_another_domain_resolves_the_old_warning(rdap, shop, now):
    rdap.register("example.co.uk", expires=iso(now + 10 * DAY))
    rdap.register("example.org", expires=iso(now + 200 * DAY))
    run(now)

    shop.url = "https://www.example.org/"
    shop.save()
    run(now + timedelta(hours=1))

    incident = Incident.objects.get()
    assert incident.resolved_at is not None
    shop.refresh_from_db()
    assert shop.domain_expires_at == now + 200 * DAY


def test_the_task_looks_up_and_warns_in_one_run(rdap, shop):
    rdap.register("example.co.uk", expires=iso(datetime.now().astimezone() + 3 * DAY))

    summary = check_domains()

    assert summary == (
        "domains: 1 looked up, 0 failed; domain warnings: 1 opened, 0 resolved"
    )
    assert Project.objects.get().domain_expires_at is not None


def test_the_command_runs_the_same_step(rdap, shop):
    rdap.register("example.co.uk", expires=iso(datetime.now().astimezone() + 3 * DAY))
    out = StringIO()

    call_command("check_domains", stdout=out)

    assert out.getvalue() == (
        "domains: 1 looked up, 0 failed; domain warnings: 1 opened, 0 resolved\n"
    )

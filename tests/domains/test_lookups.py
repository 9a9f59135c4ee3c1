"""The lookup run against a real RDAP service on 127.0.0.1: each domain
is asked about once a day for the whole install, whatever fails is said
in words and asked again, and one bad registry holds up no other."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from projects.domains.client import rdap_client
from projects.domains.lookups import (
    CLAIM_FOR,
    RETRY_AFTER,
    claim,
    keep_rows_for,
    look_up_due,
)
from projects.domains.watched import watchers
from projects.models import DomainRegistration
from tests.support.rdap_server import RdapServer

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


def run(now: datetime, **options):
    """One run as the task makes it: rows for the watched domains, then
    the lookups due."""
    keep_rows_for({w.domain for w in watchers() if w.domain}, now)
    return look_up_due(now=now, **options)


def row(domain: str) -> DomainRegistration:
    return DomainRegistration.objects.get(domain=domain)


@pytest.fixture
def watch(make_project):
    def make(url: str, days: int = 30, **fields):
        return make_project(url=url, domain_expiry_warning_days=days, **fields)

    return make


def test_a_domain_is_asked_once_a_day_however_many_projects_watch_it(rdap, watch, now):
    rdap.register("example.co.uk", expires="2027-03-01T00:00:00Z")
    rdap.register("other.com", expires="2027-04-01T00:00:00Z")
    for url in [
        "https://www.example.co.uk/",
        "https://shop.example.co.uk/health",
        "tcp://a.b.example.co.uk:443",
        "icmp://router.example.co.uk",
        "dns://1.1.1.1/mail.example.co.uk?type=MX",
        "https://other.com/",
        "https://api.other.com/",
    ]:
        watch(url)

    first = run(now)
    run(now + HOUR)
    run(now + 23 * HOUR)

    assert str(first) == "domains: 2 looked up, 0 failed"
    assert rdap.asked("example.co.uk") == 1
    assert rdap.asked("other.com") == 1
    assert rdap.requests["/bootstrap.json"] == 1  # runs with nothing due ask nothing

    run(now + DAY)

    assert rdap.asked("example.co.uk") == 2
    assert rdap.asked("other.com") == 2


def test_an_answer_keeps_the_date_the_registrar_and_the_status(rdap, watch, now):
    rdap.register(
        "example.co.uk",
        expires="2027-03-01T10:20:30+01:00",
        registrar="Registrar of Examples Ltd",
        status=("active", "client transfer prohibited"),
    )
    watch("https://a.b.example.co.uk/")

    run(now)

    found = row("example.co.uk")
    assert found.expires_at == datetime(2027, 3, 1, 9, 20, 30, tzinfo=UTC)
    assert found.registrar == "Registrar of Examples Ltd"
    assert found.status == "active, client transfer prohibited"
    assert found.rdap_url == f"{rdap.base_url}domain/example.co.uk"
    assert found.last_error == ""
    assert found.checked_at == now
    assert found.next_check_at == now + DAY


def test_a_domain_the_registry_does_not_know_is_said_so_and_asked_tomorrow(
    rdap, watch, now
):
    rdap.tlds.add("com")
    watch("https://www.never-registered.com/")

    run(now)
    run(now + HOUR)

    found = row("never-registered.com")
    assert found.last_error == (
        "127.0.0.1 does not know never-registered.com: is it registered? (404)"
    )
    assert found.expires_at is None
    assert found.next_check_at == now + DAY
    assert rdap.asked("never-registered.com") == 1


def test_an_answer_that_is_not_json_is_said_so_and_asked_again_at_the_next_run(
    rdap, watch, now
):
    rdap.answer_raw("example.com", b"<html>Service Unavailable</html>")
    watch("https://example.com/")

    run(now)

    found = row("example.com")
    assert found.last_error == "127.0.0.1 answered with something that is not JSON"
    assert found.next_check_at == now + RETRY_AFTER

    rdap.register("example.com", expires="2027-01-01T00:00:00Z")
    run(now + HOUR)

    found = row("example.com")
    assert rdap.asked("example.com") == 2
    assert found.last_error == ""
    assert found.expires_at == datetime(2027, 1, 1, tzinfo=UTC)


def test_a_registry_with_no_expiry_date_is_said_so_and_asked_tomorrow(rdap, watch, now):
    rdap.register("example.de", expires=None)
    watch("https://example.de/")

    run(now)

    found = row("example.de")
    assert (
        found.last_error == "the registry publishes no expiration date for example.de"
    )
    assert found.next_check_at == now + DAY


def test_a_registry_that_is_down_is_asked_again_and_the_known_date_stays(
    rdap, watch, now
):
    rdap.register("example.com", expires="2027-01-01T00:00:00Z")
    watch("https://example.com/")
    run(now)
    rdap.stop()

    later = now + DAY
    failed = run(later)

    found = row("example.com")
    assert str(failed) == "domains: 0 looked up, 1 failed"
    assert found.last_error.startswith(
        "the RDAP bootstrap file: 127.0.0.1: cannot connect ("
    )
    assert "refused" in found.last_error
    assert found.expires_at == datetime(2027, 1, 1, tzinfo=UTC)
    assert found.checked_at == now
    assert found.attempted_at == later
    assert found.next_check_at == later + RETRY_AFTER


def test_one_registry_that_never_answers_costs_one_timeout_not_one_per_domain(
    rdap, watch, now
):
    with RdapServer() as healthy:
        healthy.register("fine.org", expires="2027-01-01T00:00:00Z")
        rdap.delegate("org", healthy.base_url)
        for name in ("slow.com", "slower.com", "slowest.com"):
            rdap.hang(name)
            watch(f"https://{name}/")
        watch("https://www.fine.org/")

        done = run(now, client_factory=lambda: rdap_client(timeout=0.5))

    assert str(done) == "domains: 1 looked up, 3 failed"
    assert sum(rdap.asked(n) for n in ("slow.com", "slower.com", "slowest.com")) == 1
    for name in ("slow.com", "slower.com", "slowest.com"):
        assert row(name).last_error == "127.0.0.1 did not answer within 0.5 s"
        assert row(name).next_check_at == now + RETRY_AFTER
    assert row("fine.org").expires_at == datetime(2027, 1, 1, tzinfo=UTC)


def test_a_tld_without_an_rdap_service_is_said_so(rdap, watch, now):
    watch("https://example.zw/")  # the bootstrap file names no .zw service

    run(now)

    assert row("example.zw").last_error == (
        "no RDAP service for .zw in the IANA bootstrap file (its registry offers none)"
    )


def test_the_blocked_networks_guard_refuses_a_registry_on_loopback_by_default(
    rdap, watch, now, settings
):
    settings.POLL_BLOCKED_NETWORKS = ["127.0.0.0/8", "::1/128"]
    rdap.register("example.com", expires="2027-01-01T00:00:00Z")
    watch("https://example.com/")

    run(now)

    assert row("example.com").last_error == (
        "the RDAP bootstrap file: 127.0.0.1 was not asked: 127.0.0.1 is in a "
        "blocked network (POLL_BLOCKED_NETWORKS)"
    )
    assert sum(rdap.requests.values()) == 0


def test_a_domain_nobody_watches_any_more_loses_its_row(rdap, watch, now):
    rdap.register("example.com", expires="2027-01-01T00:00:00Z")
    project = watch("https://example.com/")
    run(now)

    project.domain_expiry_warning_days = None
    project.save()
    run(now + HOUR)

    assert DomainRegistration.objects.exists() is False


def test_a_due_row_is_claimed_by_one_run_only(watch, now):
    watch("https://example.com/")
    keep_rows_for(["example.com"], now)
    due_at = row("example.com").next_check_at

    assert claim(row("example.com").pk, due_at, now) is True
    # A second run read the same due time before the first claimed it.
    assert claim(row("example.com").pk, due_at, now) is False
    assert row("example.com").next_check_at == now + CLAIM_FOR

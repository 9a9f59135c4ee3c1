"""Dates with their zone the same way on every page: "2026-11-29 14:05:07
UTC" (monitor/dates.py, the `when` filter of templates), in the
site's zone (TIME_ZONE); the admin's lists write them the same way."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest

from django.urls import reverse
from django.utils import timezone

from projects.models import HousekeepingRun, Incident, PollResult, Status
from tests.support.status_pages import build_page

pytestmark = pytest.mark.django_db

ONE_FORMAT = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [A-Z][A-Za-z+\-0-9]*"
# Anything that starts like a date and a time (ISO, or a month's name).
A_DATE_AND_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}\S*(?: [A-Z][A-Za-z+\-0-9]*)?"
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}, \d{4}"
    r"|\d{1,2}:\d{2}\s?[ap]\.m\."
)


def shown_text(page: str) -> str:
    """What a reader sees: the text and the titles, not the markup (a
    <time datetime> attribute is for machines)."""
    titles = " ".join(re.findall(r'title="([^"]*)"', page))
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page) + " " + titles)


def dates_on(client, url: str) -> list[str]:
    response = client.get(url)
    assert response.status_code == 200, url
    return A_DATE_AND_TIME.findall(shown_text(response.content.decode()))


@pytest.fixture
def history(make_project, add_polls):
    """A project with polls and an incident that ended, a heartbeat with a
    ping, a housekeeping run and a status page: dates on every page."""
    now = timezone.now().replace(microsecond=0)
    project = make_project(name="shop", url="https://shop.example/")
    add_polls(
        project, "uuddu", end=now - timedelta(minutes=2), every=timedelta(seconds=10)
    )
    Incident.objects.create(
        project=project,
        started_at=now - timedelta(hours=3),
        confirmed_at=now - timedelta(hours=3) + timedelta(minutes=1),
        resolved_at=now - timedelta(hours=2),
        first_error="expected 200, got 503",
    )
    heartbeat = make_project(
        name="backup", kind="heartbeat", url="", interval=1, interval_unit="hours"
    )
    heartbeat.ping_deadline = now + timedelta(minutes=40)
    heartbeat.save()
    PollResult.objects.create(
        project=heartbeat, polled_at=now - timedelta(minutes=20), status=Status.UP
    )
    HousekeepingRun.objects.create(
        job="prune_results", started_at=now - timedelta(hours=1), finished_at=now
    )
    build_page(projects=2, sections=1, days=3, now=now)
    return project, heartbeat


def test_every_page_writes_dates_one_way_with_the_zone(admin_client, history):
    project, heartbeat = history
    pages = [
        reverse("dashboard:overview"),
        project.get_absolute_url(),
        heartbeat.get_absolute_url(),
        reverse("incidents:list"),
        reverse("polling:poller"),
        "/status/acme/",
        reverse("admin:projects_incident_changelist"),
        reverse("admin:projects_pollresultrow_changelist"),
        reverse("admin:projects_housekeepingrun_changelist"),
    ]
    seen = {url: dates_on(admin_client, url) for url in pages}

    odd = {
        url: [d for d in dates if not re.fullmatch(ONE_FORMAT, d)]
        for url, dates in seen.items()
    }
    assert {url: dates for url, dates in odd.items() if dates} == {}
    # The pages do show dates (a test that finds none proves nothing).
    for url in (project.get_absolute_url(), reverse("incidents:list"), "/status/acme/"):
        assert any(d.endswith(" UTC") for d in seen[url]), url


def test_dates_are_in_the_sites_zone_with_its_name(
    admin_client, make_project, settings
):
    settings.TIME_ZONE = "Europe/Paris"
    project = make_project(name="shop")
    started = datetime(2026, 1, 15, 12, 0, 5, tzinfo=UTC)
    Incident.objects.create(
        project=project,
        started_at=started,
        confirmed_at=started,
        resolved_at=started + timedelta(minutes=30),
        first_error="expected 200, got 503",
    )

    dates = dates_on(admin_client, reverse("incidents:list"))

    assert "2026-01-15 13:00:05 CET" in dates
    assert "2026-01-15 13:30:05 CET" in dates

"""The project page: uptime, chart, outages and raw history of one project."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from projects.models import Incident, MaintenanceWindow, PollResult, Project, Status

pytestmark = pytest.mark.django_db

MINUTE = timedelta(minutes=1)


@pytest.fixture
def now():
    return timezone.now().replace(microsecond=0)


def url(project, **params) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return (
        f"{project.get_absolute_url()}?{query}" if query else project.get_absolute_url()
    )


def test_it_asks_for_a_login_first(client, make_project):
    response = client.get(url(make_project()))

    assert response.status_code == 302
    assert response.url.startswith(reverse("account_login"))


def test_an_unknown_project_is_not_found(admin_client):
    assert admin_client.get(reverse("dashboard:project", args=[999])).status_code == 404


def test_the_project_url_is_the_dashboard_page(make_project):
    project = make_project()

    assert project.get_absolute_url() == f"/projects/{project.pk}/"


def test_it_shows_state_uptime_and_a_link_to_edit(
    admin_client, make_project, add_polls, now
):
    project = make_project(name="api")
    add_polls(project, "dddd", end=now - timedelta(days=3), every=timedelta(hours=1))
    add_polls(project, "uuud", end=now, every=MINUTE)

    response = admin_client.get(url(project))
    html = response.content.decode()

    assert "</span> Down</span>" in html
    assert [u.percent for _, u in response.context["uptimes"]] == [
        75.0,
        75.0,
        37.5,
        37.5,
        37.5,
        37.5,
    ]
    assert "1 of 4 failed" in html
    assert reverse("admin:projects_project_change", args=[project.pk]) in html
    assert b"js/live.js" in response.content


def test_maintenance_shows_apart_from_uptime(
    admin_client, make_project, add_polls, now
):
    project = make_project(name="api")
    window = MaintenanceWindow.objects.create(
        name="upgrade", starts_at=now - 10 * MINUTE, ends_at=now - 5 * MINUTE
    )
    window.projects.add(project)
    add_polls(project, "uu" + "ddddd" + "uud", end=now - 3 * MINUTE, every=MINUTE)

    response = admin_client.get(url(project))
    html = response.content.decode()

    assert response.context["uptimes"][0][1].percent == pytest.approx(100 * 4 / 5)
    assert "1 of 5 failed" in html
    assert "50.00% under maintenance (5 polls), not counted" in html
    assert (
        "⚙ 50.00%" in admin_client.get(reverse("dashboard:overview")).content.decode()
    )


def test_it_charts_the_chosen_range(admin_client, make_project, add_polls, now):
    project = make_project()
    add_polls(
        project, "uuuu", end=now, every=MINUTE, response_time_ms=[100, 200, 300, 400]
    )

    html = admin_client.get(url(project, range="1h")).content.decode()

    assert "Response time, last 1 hour" in html
    assert '<path class="line-avg" d="M' in html
    assert "4 polls, 0 failed" in html


@pytest.mark.parametrize("chosen", ["1h", "24h", "7d", "30d"])
def test_every_range_renders(admin_client, make_project, add_polls, now, chosen):
    project = make_project()
    add_polls(project, "ud" * 50, end=now, every=timedelta(minutes=30))

    response = admin_client.get(url(project, range=chosen))

    assert response.context["range"].key == chosen
    assert "<svg" in response.content.decode()


def test_an_unknown_range_falls_back_to_24_hours(admin_client, make_project, now):
    project = make_project()
    Project.objects.filter(pk=project.pk).update(created_at=now - timedelta(days=2))

    response = admin_client.get(url(project, range="forever"))

    assert response.context["range"].key == "24h"


def test_a_new_projects_page_opens_on_the_last_hour(admin_client, make_project):
    project = make_project()

    assert admin_client.get(url(project)).context["range"].key == "1h"
    assert admin_client.get(url(project, range="7d")).context["range"].key == "7d"


def test_it_lists_outages_with_start_end_duration_and_error(
    admin_client, make_project, add_polls, now
):
    project = make_project()
    add_polls(project, "uudddu", end=now - 10 * MINUTE, error="timed out after 5 s")
    add_polls(project, "dd", end=now)

    response = admin_client.get(url(project))
    html = response.content.decode()

    ongoing, past = response.context["outages"]
    assert past.started_at == now - 13 * MINUTE
    assert past.recovered_at == now - 10 * MINUTE
    assert ongoing.recovered_at is None
    local = timezone.localtime(past.started_at)
    assert f"{local:%Y-%m-%d %H:%M:%S}" in html
    assert "3 min" in html
    assert "timed out after 5 s" in html
    assert "ongoing" in html


def incident_rows(html: str) -> list[str]:
    return re.findall(r'<tr class="incident-.*?</tr>', html, flags=re.S)


def shown(moment) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d %H:%M:%S}"


def test_it_lists_its_incidents_open_first_with_times_and_errors(
    admin_client, make_project, now
):
    project, other = make_project(name="api"), make_project(name="shop")
    past = Incident.objects.create(
        project=project,
        started_at=now - timedelta(days=1),
        confirmed_at=now - timedelta(days=1) + MINUTE,
        resolved_at=now - timedelta(days=1) + 30 * MINUTE,
        first_error="expected 200, got 503",
        failed_polls=30,
    )
    ongoing = Incident.objects.create(
        project=project,
        started_at=now - timedelta(hours=2),
        confirmed_at=now - timedelta(hours=2) + MINUTE,
        first_error="connection refused",
        last_error="timed out after 5 s",
        failed_polls=120,
    )
    Incident.objects.create(
        project=other,
        started_at=now - 3 * MINUTE,
        confirmed_at=now - 2 * MINUTE,
        first_error="the other project's error",
    )

    response = admin_client.get(url(project))
    html = response.content.decode()

    assert response.context["incidents"] == [ongoing, past]
    first, second = incident_rows(html)
    assert 'class="incident-open"' in first
    assert shown(ongoing.started_at) in first
    assert "<strong>ongoing</strong>" in first
    assert "connection refused" in first
    assert "last: timed out after 5 s" in first
    assert 'class="incident-resolved"' in second
    assert shown(past.started_at) in second
    assert shown(past.resolved_at) in second
    assert "30 min" in second
    assert "expected 200, got 503" in second
    assert "the other project" not in html
    assert f"{reverse('incidents:list')}?project={project.pk}" in html


def test_a_project_without_incidents_says_so(admin_client, make_project, now):
    project, other = make_project(), make_project()
    Incident.objects.create(
        project=other, started_at=now, confirmed_at=now, first_error="refused"
    )

    html = admin_client.get(url(project)).content.decode()

    assert incident_rows(html) == []
    assert "No incidents yet. One opens after 3 failed polls in a row." in html


def test_history_filters_by_status_and_pages(
    admin_client, make_project, add_polls, now
):
    project = make_project()
    add_polls(project, "ud" * 40, end=now)

    down = admin_client.get(url(project, status="down", range="24h"))
    assert {p.status for p in down.context["history"]} == {"down"}
    assert len(down.context["history"]) == 40

    first = admin_client.get(url(project, range="24h"))
    older = admin_client.get(
        url(project, range="24h", before=first.context["next_before"])
    )
    assert len(first.context["history"]) == 50
    assert len(older.context["history"]) == 30
    assert (
        first.context["history"][-1].polled_at > older.context["history"][0].polled_at
    )
    assert "← Newest" in older.content.decode()


def test_a_project_without_polls(admin_client, make_project):
    html = admin_client.get(url(make_project())).content.decode()

    assert "Not polled yet" in html
    assert "No polls in this range." in html
    assert "No outages in this range." in html


def test_a_filter_that_cannot_match_skips_the_query(
    admin_client, make_project, add_polls, now, django_assert_num_queries
):
    project = make_project()
    add_polls(project, "dddd", end=now)

    with django_assert_num_queries(20):
        response = admin_client.get(url(project, status="up"))

    assert response.context["history"] == []


def test_the_page_costs_the_same_queries_for_few_or_many_polls(
    admin_client, make_project, add_polls, now
):
    def queries(project) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(url(project, range="7d")).status_code == 200
        return len(captured)

    idle = make_project()
    busy = make_project()
    add_polls(busy, "uudduduuuddd" * 100, end=now, every=MINUTE)

    assert queries(idle) == queries(busy)
    # Session, user, maintenance windows, project, its tags, uptime (the compaction
    # boundary, rollups and part-hours), chart, outages, history,
    # deliveries, incidents, and the banners' poller heartbeat and monitor
    # outage, the current team and the user's teams (the header's switcher),
    # the percentiles (the compaction boundary, hourly rollups, part-hour),
    # the chart's percentile lines (hourly rollups; no compacted day yet).
    assert queries(busy) == 21


def test_history_refuses_a_bad_cursor(admin_client, make_project, add_polls, now):
    project = make_project()
    add_polls(project, "uu", end=now)

    response = admin_client.get(url(project, before="abc"))

    assert response.status_code == 400


def test_the_longest_ranges_say_which_polls_are_no_longer_kept(
    admin_client, make_project, add_polls, now, settings
):
    settings.RESULT_RETENTION_DAYS = 30
    project = make_project()
    add_polls(project, "uuud", end=now, every=MINUTE)

    year = admin_client.get(url(project, range="1y")).content.decode()
    month = admin_client.get(url(project, range="30d")).content.decode()

    assert "polls are kept 30 days" in year
    assert "RESULT_RETENTION_DAYS" not in month
    for key in ("90d", "1y"):
        assert f"?range={key}" in month


def test_a_heartbeats_ping_body_reads_as_a_message_not_an_error(
    admin_client, make_project, now
):
    project = make_project(kind="heartbeat", url="")
    PollResult.objects.create(
        project=project,
        polled_at=now,
        status=Status.UP,
        error_message="backup done: 12 GB",
    )

    html = admin_client.get(url(project)).content.decode()

    assert '<th scope="col">Message</th>' in html
    assert '<td class="message">backup done: 12 GB</td>' in html


def test_it_shows_the_certificate_expiry_and_each_polls_phases(
    admin_client, make_project, now
):
    project = make_project(url="https://127.0.0.1/")
    project.tls_expires_at = now + timedelta(days=40)
    project.save()
    PollResult.objects.create(
        project=project,
        polled_at=now - MINUTE,
        status="up",
        status_code=200,
        response_time_ms=61,
        dns_ms=3,
        connect_ms=1,
        tls_ms=12,
        first_byte_ms=40,
    )

    html = admin_client.get(url(project)).content.decode()

    assert (
        f'Certificate expires <time datetime="{project.tls_expires_at:%Y-%m-%d}' in html
    )
    assert "DNS 3 · connect 1 · TLS 12 · first byte 40 ms" in html
    assert 'class="phase-first-byte"' in html  # the chart stacks the phases


def test_it_shows_the_percentiles_of_the_range(
    admin_client, make_project, add_polls, now
):
    project = make_project()
    add_polls(project, "u" * 20, end=now, response_time_ms=[100] * 18 + [900, 2000])

    response = admin_client.get(url(project, range="24h"))

    assert response.context["percentiles"]["p50_ms"] == pytest.approx(100, rel=0.04)
    assert response.context["percentiles"]["p99_ms"] == pytest.approx(2000, rel=0.04)
    assert "p95 24 hours" in response.content.decode()

"""The project page with several regions: each region's latest poll and
whether its view counts (docs/regions.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from polling.store import DatabaseResultStore
from projects.models import PollerNode, Region
from tests.support.outcomes import T0, outcome

pytestmark = pytest.mark.django_db


def test_the_project_page_shows_each_regions_latest_poll(admin_client, make_project):
    project = make_project(quorum=2)
    now = timezone.now()
    regions = [
        Region.objects.create(name=name, last_seen_at=now) for name in ("eu", "us")
    ]
    Region.objects.create(name="ap", last_seen_at=now - timedelta(hours=1))
    eu, us = (DatabaseResultStore(region_id=r.pk) for r in regions)
    eu.save([outcome(project.pk, ms=41)])
    us.save([outcome(project.pk, up=False, code=503, error="<b>expected</b> 200")])

    page = admin_client.get(project.get_absolute_url()).content.decode()

    assert "Regions" in page
    assert "41 ms" in page
    assert "&lt;b&gt;expected&lt;/b&gt; 200" in page  # escaped
    assert "Down when 2 of the counted regions confirm a failure." in page


def test_a_regions_failed_polls_are_listed_though_the_project_was_up(
    admin_client, make_project
):
    project = make_project(quorum=2)
    now = timezone.now()
    eu, us = (Region.objects.create(name=n, last_seen_at=now) for n in ("eu", "us"))
    DatabaseResultStore(region_id=eu.pk).save([outcome(project.pk)])
    DatabaseResultStore(region_id=us.pk).save([outcome(project.pk, up=False, code=503)])

    page = admin_client.get(project.get_absolute_url() + "?status=down&range=30d")
    rows = page.content.decode().split('<table class="history">')[1]

    assert "expected 200, got 503" in rows  # uptime counted no failure
    assert "<td>us</td>" in rows


def test_a_single_region_project_page_has_no_regions_table(admin_client, make_project):
    project = make_project()
    DatabaseResultStore().save([outcome(project.pk)])

    page = admin_client.get(project.get_absolute_url()).content.decode()

    assert 'id="regions-heading"' not in page


def test_the_poller_page_lists_regions_with_their_live_pollers(admin_client):
    now = timezone.now()
    eu = Region.objects.create(name="eu", label="Frankfurt", last_seen_at=now)
    us = Region.objects.create(name="us", last_seen_at=now - timedelta(hours=1))
    PollerNode.objects.create(
        name="a:1", host="a", pid=1, started_at=now, last_seen_at=now, region=eu
    )

    page = admin_client.get(reverse("polling:poller")).content.decode()

    assert 'id="regions-heading"' in page
    assert "Frankfurt" in page
    assert "no: no live poller" in page  # us
    assert us.name in page


def test_a_region_gets_its_label_in_the_admin_and_keeps_its_name(admin_client):
    region = Region.objects.create(name="eu")
    url = reverse("admin:projects_region_change", args=[region.pk])

    response = admin_client.post(url, {"name": "renamed", "label": "Frankfurt"})

    assert response.status_code == 302
    region.refresh_from_db()
    assert (region.name, region.label) == ("eu", "Frankfurt")


def three_regions_polled(project, steps: int = 3) -> dict[str, Region]:
    """eu, us and ap live, each having polled `project` `steps` times, us
    failing and slower."""
    now = timezone.now()
    regions = {
        name: Region.objects.create(name=name, last_seen_at=now)
        for name in ("eu", "us", "ap")
    }
    stores = {name: DatabaseResultStore(region_id=r.pk) for name, r in regions.items()}
    # Whole minutes (T0 is one): a window's three polls share a chart bucket.
    start = (now - T0).total_seconds() // 60 * 60 - steps * 60
    for step in range(steps):
        at = start + step * 60
        stores["eu"].save([outcome(project.pk, at=at, ms=40)])
        stores["us"].save([outcome(project.pk, at=at + 2, up=False, code=503, ms=900)])
        stores["ap"].save([outcome(project.pk, at=at + 4, ms=250)])
    return regions


def test_the_chart_draws_a_named_line_per_region(admin_client, make_project):
    project = make_project(quorum=2)
    three_regions_polled(project)

    page = admin_client.get(project.get_absolute_url() + "?range=1h")
    chart = page.content.decode().split('<figure class="chart">')[1]

    for style, name in enumerate(["ap", "eu", "us"]):
        assert f'class="line-region line-region-{style}" d="M' in chart
        assert f'dominant-baseline="middle">{name}</text>' in chart  # at its end
        assert f"{name} (average)</span>" in chart  # in the legend
    assert 'class="line-avg"' not in chart
    assert "ap 250 ms, eu 40 ms, us 900 ms" in chart  # tooltips, by name


def test_a_range_read_from_rollups_says_it_joins_the_regions(
    admin_client, make_project
):
    project = make_project(quorum=2)
    three_regions_polled(project)

    page = admin_client.get(project.get_absolute_url() + "?range=7d")

    assert b'class="line-region' not in page.content
    assert b"All regions together" in page.content


def test_the_overview_shows_a_dot_per_region_with_its_state_in_words(
    admin_client, make_project
):
    project = make_project(quorum=2, failure_threshold=2)
    single = make_project()
    DatabaseResultStore().save([outcome(single.pk)])
    three_regions_polled(project)

    page = admin_client.get(reverse("dashboard:overview")).content.decode()
    rows = page.split("<tbody>")[1]
    row = next(r for r in rows.split("<tr") if project.name in r)
    alone = next(r for r in rows.split("<tr") if single.name in r)

    assert '<span class="visually-hidden">ap: up</span>' in row
    assert '<span class="visually-hidden">us: down</span>' in row
    assert row.index("ap: up") < row.index("eu: up") < row.index("us: down")
    assert "region-dot" not in alone


def test_a_single_region_overview_has_no_dots(admin_client, make_project):
    DatabaseResultStore().save([outcome(make_project().pk)])

    page = admin_client.get(reverse("dashboard:overview")).content.decode()

    assert "region-dot" not in page


def test_the_overview_with_regions_costs_the_same_queries_for_few_or_many(
    admin_client, make_project
):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(reverse("dashboard:overview")).status_code == 200
        return len(captured)

    first = make_project()
    regions = three_regions_polled(first, steps=1)
    few = queries()
    for _ in range(10):
        project = make_project()
        for region in regions.values():
            DatabaseResultStore(region_id=region.pk).save([outcome(project.pk)])

    assert queries() == few

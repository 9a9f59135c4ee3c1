"""The project page with several regions: each region's latest poll and
whether its view counts (docs/regions.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.urls import reverse
from django.utils import timezone

from polling.store import DatabaseResultStore
from projects.models import PollerNode, Region
from tests.outcomes import outcome

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

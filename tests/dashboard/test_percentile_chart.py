"""The project chart's p50, p95 and p99 lines: one point per hour (or the
range's bucket, when longer) from the rollups' histograms, drawn as three
paths named in the legend; the page adds no script for them."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from django.urls import reverse
from django.utils import timezone

from projects.dashboard.queries.percentiles import percentile_points
from projects.dashboard.queries.ranges import RANGES
from projects.latency import histogram

pytestmark = pytest.mark.django_db


def slow_tail(n: int) -> list[int]:
    """n response times: nine in ten at 100 ms, the rest at 1,000 ms."""
    return [1000 if i % 10 == 9 else 100 for i in range(n)]


@pytest.fixture
def polled(make_project, add_polls):
    """Three hours of polls every minute, ending at the last whole hour."""
    project = make_project()
    end = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(
        minutes=1
    )
    add_polls(project, "u" * 180, end=end, response_time_ms=slow_tail(180))
    return project


def test_each_hour_is_a_point_with_its_percentiles(polled):
    points = percentile_points(polled.pk, RANGES["24h"], timezone.now())

    assert len(points) == 3
    times = slow_tail(180)
    for hour, point in enumerate(points):
        exact = times[hour * 60 : hour * 60 + 60]
        for p in (50, 95, 99):
            got, want = getattr(point, f"p{p}_ms"), histogram.exact_percentile(exact, p)
            assert math.isclose(got, want, rel_tol=0.04), (p, got, want)
    assert [p.width_seconds for p in points] == [3600] * 3


def test_a_longer_range_takes_its_own_bucket_width(polled):
    points = percentile_points(polled.pk, RANGES["30d"], timezone.now())

    assert {p.width_seconds for p in points} == {3 * 3600}
    assert sum(1 for _ in points) in (1, 2)  # three hours in one or two buckets


def test_the_page_carries_the_series_and_draws_three_lines_with_a_legend(
    admin_client, polled
):
    response = admin_client.get(
        reverse("dashboard:project", args=[polled.pk]) + "?range=24h"
    )

    points = response.context["percentile_points"]
    assert [p.p95_ms for p in points] == [
        p.p95_ms for p in percentile_points(polled.pk, RANGES["24h"], timezone.now())
    ]
    html = response.content.decode()
    for name in ("p50", "p95", "p99"):
        assert f'<path class="line-pct line-{name}" d="M' in html
        assert f'<line class="line-pct line-{name}"' in html  # the legend's key
    assert "p99 (per hour, from the rollups)" in html
    assert "<script>" not in html  # nothing inline (CSP)


def test_no_rollups_no_percentile_lines(admin_client, make_project):
    project = make_project()

    response = admin_client.get(reverse("dashboard:project", args=[project.pk]))

    assert response.context["percentile_points"] == []
    assert "line-pct" not in response.content.decode()

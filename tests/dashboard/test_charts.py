"""The response-time chart's geometry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from django.template.loader import render_to_string

from projects.dashboard.queries.ranges import RANGES
from projects.dashboard.queries.response_times import Bucket
from projects.dashboard.templatetags.charts import (
    BOTTOM,
    LEFT,
    RIGHT,
    TOP,
    Scale,
    line_path,
    nice_ceiling,
    phase_stacks,
    response_chart,
    summary,
    x_ticks,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
SCALE = Scale(NOW - 100 * MINUTE, NOW, 200)


def bucket(minutes_ago: int, avg_ms=100.0, max_ms=150, polls=1, failures=0) -> Bucket:
    return Bucket(NOW - minutes_ago * MINUTE, polls, failures, avg_ms, max_ms)


@pytest.mark.parametrize(
    ("peak", "ceiling"),
    [(0, 100), (1, 1), (87, 100), (101, 200), (240, 250), (251, 500), (4200, 5000)],
)
def test_nice_ceiling(peak, ceiling):
    assert nice_ceiling(peak) == ceiling


def test_the_scale_maps_time_and_milliseconds_into_the_plot():
    assert SCALE.x(NOW - 100 * MINUTE) == LEFT
    assert SCALE.x(NOW) == RIGHT
    assert SCALE.x(NOW - 200 * MINUTE) == LEFT  # clamped
    assert (SCALE.y(0), SCALE.y(200)) == (BOTTOM, TOP)


def test_the_line_breaks_at_gaps_and_dots_lone_points():
    buckets = [bucket(50), bucket(49), bucket(48), bucket(20), bucket(10, avg_ms=None)]

    path = line_path(buckets, SCALE, lambda b: b.avg_ms, MINUTE, 2 * MINUTE)

    assert [c[0] for c in path.split(" ") if c[0] in "ML"] == ["M", "L", "L", "M"]
    assert path.endswith("h0.01")


def test_time_labels_fall_on_whole_steps():
    ticks = list(x_ticks(Scale(NOW - timedelta(hours=24), NOW, 100), 4 * 3600))

    assert [label for _, label in ticks] == [
        "12:00",
        "16:00",
        "20:00",
        "00:00",
        "04:00",
        "08:00",
        "12:00",
    ]
    assert [
        label for _, label in x_ticks(Scale(NOW - timedelta(days=2), NOW, 1), 86400)
    ] == [
        "Nov 21",
        "Nov 22",
    ]


def test_the_summary_says_what_the_chart_shows():
    assert summary(
        [bucket(5, 80, 300, polls=10, failures=1), bucket(1, 120, 200, polls=5)]
    ) == ("15 polls, 1 failed; bucket averages 80 to 120 ms, slowest poll 300 ms.")
    assert summary([]) == "No polls in this range."
    assert summary([bucket(1, None, None, polls=2, failures=2)]) == (
        "2 polls, 2 failed, none got a response."
    )


def test_the_chart_is_svg_with_both_lines_a_failure_bar_and_tooltips():
    buckets = [bucket(60 * h, polls=10, failures=h % 2) for h in range(1, 20)]
    context = response_chart(buckets, RANGES["24h"], NOW, interval_seconds=60)

    html = render_to_string("projects/_response_chart.html", context)

    assert html.count('<path class="line-') == 2
    assert html.count('class="fail"') == 10 + 1  # ten bars and the legend's key
    assert html.count("</title>") == 1 + len(buckets)
    assert "1 of 10 polls failed" in html
    assert "maximum" in html
    assert "average" in html


def test_no_buckets_means_no_chart():
    context = response_chart([], RANGES["1h"], NOW, interval_seconds=60)

    assert "<svg" not in render_to_string("projects/_response_chart.html", context)


def test_phases_stack_bottom_up_under_the_lines():
    phased = Bucket(NOW - 10 * MINUTE, 1, 0, 100.0, 100, phases=(10.0, 20.0, 0.0, 50.0))

    bars = list(phase_stacks([phased, bucket(5)], SCALE, MINUTE))

    assert [bar["part"] for bar in bars] == ["dns", "connect", "first-byte"]
    assert bars[0]["y"] + bars[0]["height"] == SCALE.y(0)
    assert bars[1]["y"] + bars[1]["height"] == SCALE.y(10)
    assert bars[2]["y"] == SCALE.y(80)


def test_the_chart_shows_phases_only_when_the_buckets_have_them():
    phased = [
        Bucket(NOW - h * MINUTE, 1, 0, 90.0, 90, (5.0, 5.0, 20.0, 40.0)) for h in (3, 2)
    ]
    plain = [bucket(3), bucket(2)]

    with_phases = render_to_string(
        "projects/_response_chart.html",
        response_chart(phased, RANGES["1h"], NOW, interval_seconds=60),
    )
    without = render_to_string(
        "projects/_response_chart.html",
        response_chart(plain, RANGES["1h"], NOW, interval_seconds=60),
    )

    assert with_phases.count('class="phase-tls"') == 2 + 1  # and the key
    assert "DNS 5, connect 5, TLS 20, first byte (server) 40" in with_phases
    assert "phase-" not in without

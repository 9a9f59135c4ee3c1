"""response_time_buckets(): the chart's data, bucketed in the database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from projects.dashboard.queries.ranges import RANGES
from projects.dashboard.queries.response_times import Bucket, response_time_buckets
from projects.models import PollResult

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 22, 12, 30, tzinfo=UTC)


def at(hour: int, minute: int, second: int = 0) -> datetime:
    return datetime(2026, 11, 22, hour, minute, second, tzinfo=UTC)


def test_the_1h_range_has_15_second_buckets_from_raw_polls(make_project, add_polls):
    project = make_project()
    add_polls(project, "u", end=at(11, 29, 59), response_time_ms=999)
    add_polls(
        project,
        "ud",
        end=at(12, 0, 10),
        every=timedelta(seconds=5),
        response_time_ms=[100, 200],
    )
    add_polls(project, "u", end=at(12, 0, 20), response_time_ms=50)

    buckets = response_time_buckets(project.pk, RANGES["1h"], NOW)

    assert buckets == [
        Bucket(at(12, 0, 0), polls=2, failures=1, avg_ms=150, max_ms=200),
        Bucket(at(12, 0, 15), polls=1, failures=0, avg_ms=50, max_ms=50),
    ]
    assert buckets[0].failure_share == 0.5


def test_the_24h_range_has_5_minute_buckets(make_project, add_polls):
    project = make_project()
    add_polls(
        project,
        "uuuu",
        end=at(12, 9),
        every=timedelta(minutes=2),
        response_time_ms=[10, 20, 30, None],
    )

    buckets = response_time_buckets(project.pk, RANGES["24h"], NOW)

    assert buckets == [
        Bucket(at(12, 0), polls=1, failures=0, avg_ms=10, max_ms=10),
        Bucket(at(12, 5), polls=3, failures=0, avg_ms=25, max_ms=30),
    ]


def test_a_bucket_without_responses_has_no_average(make_project, add_polls):
    project = make_project()
    add_polls(project, "dd", end=at(12, 1), response_time_ms=None)

    (bucket,) = response_time_buckets(project.pk, RANGES["24h"], NOW)

    assert (bucket.avg_ms, bucket.max_ms, bucket.failure_share) == (None, None, 1.0)


def test_the_7d_range_has_hourly_buckets_from_rollups(make_project, add_polls):
    project = make_project()
    add_polls(
        project,
        "uud",
        end=at(10, 40),
        every=timedelta(minutes=20),
        response_time_ms=[100, 300, None],
    )
    add_polls(project, "u", end=at(11, 5), response_time_ms=40)

    buckets = response_time_buckets(project.pk, RANGES["7d"], NOW)

    assert buckets == [
        Bucket(at(10, 0), polls=3, failures=1, avg_ms=200, max_ms=300),
        Bucket(at(11, 0), polls=1, failures=0, avg_ms=40, max_ms=40),
    ]


def test_the_30d_range_has_3_hour_buckets(make_project, add_polls):
    project = make_project()
    add_polls(
        project,
        "uuuu",
        end=at(11, 30),
        every=timedelta(hours=1),
        response_time_ms=[10, 20, 30, 40],
    )

    buckets = response_time_buckets(project.pk, RANGES["30d"], NOW)

    assert buckets == [
        Bucket(at(6, 0), polls=1, failures=0, avg_ms=10, max_ms=10),
        Bucket(at(9, 0), polls=3, failures=0, avg_ms=30, max_ms=40),
    ]


def test_a_project_without_polls_has_no_buckets(make_project):
    assert response_time_buckets(make_project().pk, RANGES["24h"], NOW) == []


@pytest.mark.parametrize("time_range", RANGES.values(), ids=RANGES.keys())
def test_no_range_has_more_than_about_300_buckets(time_range):
    buckets = time_range.length.total_seconds() / time_range.bucket_seconds
    assert buckets <= 300


def test_the_longest_ranges_chart_the_same_before_and_after_compaction(
    make_project, add_polls, settings
):
    """90 days in 1-day buckets and a year in 2-day buckets, from hourly
    rollups alone, then from daily ones where the hourly are gone."""
    from projects.housekeeping.compaction import compact_rollups
    from projects.models import DailyRollup

    project = make_project()
    statuses = "".join("d" if i % 5 == 0 else "u" for i in range(400 * 6))
    times = [None if i % 11 == 0 else 30 + i % 470 for i in range(len(statuses))]
    add_polls(
        project,
        statuses,
        end=NOW,
        every=timedelta(hours=4),
        response_time_ms=times,
    )
    before = {
        key: response_time_buckets(project.pk, RANGES[key], NOW)
        for key in ("90d", "1y")
    }

    settings.HOURLY_RETENTION_DAYS = 31
    compact_rollups(now=NOW)
    after = {
        key: response_time_buckets(project.pk, RANGES[key], NOW)
        for key in ("90d", "1y")
    }

    assert DailyRollup.objects.exists()
    assert len(before["90d"]) == 90
    assert len(before["1y"]) in (182, 183)
    assert {k: [b.start for b in v] for k, v in after.items()} == {
        k: [b.start for b in v] for k, v in before.items()
    }
    for key in before:
        for old, new in zip(before[key], after[key], strict=True):
            assert (old.polls, old.failures, old.max_ms) == (
                new.polls,
                new.failures,
                new.max_ms,
            )
            assert old.avg_ms == pytest.approx(new.avg_ms)
    assert before["90d"][0].start == datetime(2026, 8, 25, tzinfo=UTC)


def test_raw_poll_buckets_average_each_phase_over_the_polls_with_a_response(
    make_project,
):
    project = make_project()
    fresh = {"dns_ms": 4, "connect_ms": 2, "tls_ms": 10, "first_byte_ms": 30}
    reused = {"first_byte_ms": 50}
    for second, ms, phases in [(0, 60, fresh), (5, 60, reused), (10, None, {})]:
        PollResult.objects.create(
            project=project,
            polled_at=at(12, 0, second),
            status="up" if ms else "down",
            response_time_ms=ms,
            **phases,
        )

    [bucket] = response_time_buckets(project.pk, RANGES["1h"], NOW)

    assert bucket.phases == (2, 1, 5, 40)


def test_rollup_buckets_have_no_phases(make_project, add_polls):
    project = make_project()
    add_polls(project, "uu", end=at(11, 1))

    assert [b.phases for b in response_time_buckets(project.pk, RANGES["7d"], NOW)] == [
        None
    ]

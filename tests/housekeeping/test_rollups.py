"""rebuild_rollups(): hourly sums recomputed from raw polls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from projects.housekeeping.rollups import rebuild_rollups
from projects.models import HourlyRollup, PollResult, Status
from projects.models.results import rollup_hour
from tests.support.factories import rollup_rows

pytestmark = pytest.mark.django_db

HOUR = datetime(2026, 11, 1, 10, tzinfo=UTC)


def poll(project, at, status=Status.UP, ms=100) -> PollResult:
    return PollResult.objects.create(
        project=project,
        polled_at=at,
        status=status,
        status_code=200 if status == Status.UP else None,
        response_time_ms=ms,
    )


def test_it_sums_each_project_hour(make_project):
    first, second = make_project(), make_project()
    poll(first, HOUR, ms=100)
    poll(first, HOUR + timedelta(minutes=59, seconds=59.5), Status.DOWN, ms=None)
    poll(first, HOUR + timedelta(minutes=30), Status.DOWN, ms=300)
    poll(first, HOUR + timedelta(hours=1), ms=50)
    poll(second, HOUR + timedelta(minutes=5, microseconds=1), ms=70)

    assert rebuild_rollups() == 3

    assert rollup_rows() == [
        (first.pk, HOUR, 3, 2, 2, 400, 300),
        (first.pk, HOUR + timedelta(hours=1), 1, 0, 1, 50, 50),
        (second.pk, HOUR, 1, 0, 1, 70, 70),
    ]


def test_an_hour_without_responses_sums_to_zero(make_project):
    project = make_project()
    poll(project, HOUR, Status.DOWN, ms=None)

    rebuild_rollups()

    assert rollup_rows() == [(project.pk, HOUR, 1, 1, 0, 0, None)]


def test_it_replaces_stale_rollups(make_project):
    project = make_project()
    poll(project, HOUR)
    HourlyRollup.objects.create(project=project, hour=HOUR, polls=99, failures=99)
    HourlyRollup.objects.create(
        project=project, hour=HOUR - timedelta(hours=5), polls=1
    )

    rebuild_rollups()

    assert rollup_rows() == [(project.pk, HOUR, 1, 0, 1, 100, 100)]


def test_it_rebuilds_only_the_projects_asked_for(make_project):
    chosen, other = make_project(), make_project()
    poll(chosen, HOUR)
    poll(other, HOUR)
    HourlyRollup.objects.create(project=other, hour=HOUR, polls=7)

    assert rebuild_rollups(project_ids=[chosen.pk]) == 1

    assert rollup_rows() == [
        (chosen.pk, HOUR, 1, 0, 1, 100, 100),
        (other.pk, HOUR, 7, 0, 0, 0, None),
    ]


def test_since_starts_at_the_whole_hour_and_keeps_older_rollups(make_project):
    project = make_project()
    poll(project, HOUR - timedelta(minutes=1))
    poll(project, HOUR + timedelta(minutes=10))
    poll(project, HOUR + timedelta(minutes=50))
    HourlyRollup.objects.create(
        project=project, hour=HOUR - timedelta(hours=1), polls=5
    )

    rebuild_rollups(since=HOUR + timedelta(minutes=40))

    assert rollup_rows() == [
        (project.pk, HOUR - timedelta(hours=1), 5, 0, 0, 0, None),
        (project.pk, HOUR, 2, 0, 2, 200, 100),
    ]


def test_rollups_match_the_raw_polls(add_polls, make_project):
    project = make_project()
    statuses = "uuduuddduu" * 30
    times = [(i * 37) % 500 if i % 7 else None for i in range(len(statuses))]
    add_polls(
        project,
        statuses,
        end=HOUR + timedelta(hours=4, minutes=17),
        every=timedelta(seconds=50),
        response_time_ms=times,
    )

    polls = PollResult.objects.all()
    for rollup in HourlyRollup.objects.all():
        hour = polls.filter(
            polled_at__gte=rollup.hour, polled_at__lt=rollup.hour + timedelta(hours=1)
        )
        timed = [p.response_time_ms for p in hour if p.response_time_ms is not None]
        assert rollup.polls == hour.count()
        assert rollup.failures == hour.filter(status=Status.DOWN).count()
        assert rollup.responses == len(timed)
        assert rollup.response_time_sum_ms == sum(timed)
        assert rollup.response_time_max_ms == max(timed)
    assert sum(r.polls for r in HourlyRollup.objects.all()) == len(statuses)


def test_rollup_hour_is_the_utc_hour():
    india = timezone(timedelta(hours=5, minutes=30))
    assert rollup_hour(datetime(2026, 11, 1, 21, 15, tzinfo=india)) == datetime(
        2026, 11, 1, 15, tzinfo=UTC
    )

"""recent_outages(): runs of consecutive down polls, newest first."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from projects.dashboard.queries.outages import Outage, recent_outages
from projects.models import HourlyRollup, PollResult, Status

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 22, 12, 30, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
LONG_AGO = NOW - timedelta(days=365)


def minutes_ago(n: float) -> datetime:
    return NOW - n * MINUTE


def test_it_finds_each_run_with_its_boundaries(make_project, add_polls):
    project = make_project()
    # ages:           9876543210 minutes
    add_polls(project, "uuuddduudu", end=NOW)

    assert recent_outages(project.pk, since=LONG_AGO) == [
        Outage(minutes_ago(1), minutes_ago(1), NOW, "expected 200, got 503"),
        Outage(minutes_ago(6), minutes_ago(4), minutes_ago(3), "expected 200, got 503"),
    ]


def test_an_outage_still_going_has_no_end(make_project, add_polls):
    project = make_project()
    add_polls(project, "udd", end=NOW)

    (outage,) = recent_outages(project.pk, since=LONG_AGO)

    assert outage.recovered_at is None
    assert outage.duration(NOW + MINUTE) == 2 * MINUTE


def test_the_duration_runs_until_recovery(make_project, add_polls):
    project = make_project()
    add_polls(project, "udu", end=NOW)

    (outage,) = recent_outages(project.pk, since=LONG_AGO)

    assert outage.duration(NOW) == MINUTE


def test_it_reports_the_first_error_of_each_outage(make_project, add_polls):
    project = make_project()
    add_polls(project, "ud", end=minutes_ago(2), error="timed out after 5 s")
    add_polls(project, "du", end=NOW, error="connection refused")

    (outage,) = recent_outages(project.pk, since=LONG_AGO)

    assert outage.error == "timed out after 5 s"
    assert outage.last_failure_at == minutes_ago(1)


def test_an_outage_that_began_before_the_range_keeps_its_start(make_project, add_polls):
    project = make_project()
    add_polls(project, "uuddddduuuu", end=NOW)

    (outage,) = recent_outages(project.pk, since=minutes_ago(5))

    assert outage.started_at == minutes_ago(8)


def test_outages_that_ended_before_the_range_are_left_out(make_project, add_polls):
    project = make_project()
    add_polls(project, "uduuuuu", end=NOW)

    assert recent_outages(project.pk, since=minutes_ago(4)) == []


def test_a_long_outage_across_many_hours(make_project, add_polls):
    project = make_project()
    add_polls(project, "uu" + "d" * 900 + "u", end=NOW)

    (outage,) = recent_outages(project.pk, since=LONG_AGO)

    assert (outage.started_at, outage.recovered_at) == (minutes_ago(900), NOW)


def test_an_outage_across_hours_without_polls(make_project, add_polls):
    project = make_project()
    add_polls(project, "ududdu", end=NOW, every=timedelta(hours=3))

    outages = recent_outages(project.pk, since=LONG_AGO)

    assert [(o.started_at, o.recovered_at) for o in outages] == [
        (NOW - timedelta(hours=6), NOW),
        (NOW - timedelta(hours=12), NOW - timedelta(hours=9)),
    ]


def test_an_all_down_project_has_one_outage_since_its_first_poll(
    make_project, add_polls
):
    project = make_project()
    add_polls(project, "d" * 200, end=NOW, every=timedelta(minutes=5))

    (outage,) = recent_outages(project.pk, since=minutes_ago(60))

    assert outage.started_at == NOW - 199 * timedelta(minutes=5)
    assert outage.recovered_at is None


def test_an_all_up_project_and_one_without_polls_have_none(make_project, add_polls):
    up = make_project()
    add_polls(up, "u" * 50, end=NOW)

    assert recent_outages(up.pk, since=LONG_AGO) == []
    assert recent_outages(make_project().pk, since=LONG_AGO) == []


def test_it_stops_at_the_limit(make_project, add_polls):
    project = make_project()
    add_polls(project, "ud" * 10, end=NOW)

    outages = recent_outages(project.pk, since=LONG_AGO, limit=3)

    assert [o.started_at for o in outages] == [NOW, minutes_ago(2), minutes_ago(4)]


def test_it_is_right_without_rollups_too(make_project, add_polls):
    project = make_project()
    add_polls(project, "uu" + "d" * 150 + "uudu", end=NOW)
    HourlyRollup.objects.all().delete()

    outages = recent_outages(project.pk, since=LONG_AGO)

    assert [o.started_at for o in outages] == [minutes_ago(1), minutes_ago(153)]


@pytest.mark.parametrize("seed", range(4))
def test_it_agrees_with_a_scan_of_every_poll(make_project, add_polls, seed):
    rng = random.Random(seed)
    runs = [rng.choice("ud") * rng.choice([1, 1, 2, 5, 40, 200]) for _ in range(60)]
    project = make_project()
    add_polls(
        project,
        "".join(runs),
        end=NOW,
        every=timedelta(seconds=rng.choice([20, 45, 400])),
    )

    outages = recent_outages(project.pk, since=LONG_AGO, limit=1000)

    assert outages == outages_by_scanning(project.pk)


def outages_by_scanning(project_id: int) -> list[Outage]:
    """The obvious, slow way: every poll in order."""
    outages = []
    start = last = None
    for poll in PollResult.objects.filter(project_id=project_id).order_by("polled_at"):
        if poll.status == Status.DOWN:
            if start is None:
                start = poll
            last = poll
        elif start is not None:
            outages.append(
                Outage(
                    start.polled_at, last.polled_at, poll.polled_at, start.error_message
                )
            )
            start = None
    if start is not None:
        outages.append(
            Outage(start.polled_at, last.polled_at, None, start.error_message)
        )
    return outages[::-1]

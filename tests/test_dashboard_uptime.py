"""uptime_by_project(): the share of up polls per range, from rollups."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from projects.models import HourlyRollup
from projects.queries.ranges import OVERVIEW_RANGES, RANGES
from projects.queries.uptime import Uptime, uptime_by_project

pytestmark = pytest.mark.django_db

# Half past, so every range starts in the middle of an hour.
NOW = datetime(2026, 11, 22, 12, 30, tzinfo=UTC)
EVERY = timedelta(minutes=10)
PER_DAY = 144


def statuses(days: int, *, down_at: tuple[timedelta, ...] = ()) -> str:
    """Polls every 10 minutes for `days` days up to NOW, down at the given
    ages."""
    count = days * PER_DAY + 1
    down = {count - 1 - age // EVERY for age in down_at}
    return "".join("d" if i in down else "u" for i in range(count))


def test_it_counts_polls_and_failures_in_each_range(make_project, add_polls):
    project = make_project()
    ages = (timedelta(hours=2), timedelta(days=3), timedelta(days=20))
    add_polls(
        project,
        statuses(40, down_at=(*ages, timedelta(days=35))),
        end=NOW,
        every=EVERY,
    )

    uptime = uptime_by_project([project.pk], RANGES.values(), NOW)[project.pk]

    assert uptime == {
        "1h": Uptime(7, 0),
        "24h": Uptime(PER_DAY + 1, 1),
        "7d": Uptime(7 * PER_DAY + 1, 2),
        "30d": Uptime(30 * PER_DAY + 1, 3),
    }


def test_a_poll_just_before_a_range_does_not_count(make_project, add_polls):
    project = make_project()
    add_polls(project, "d", end=NOW - timedelta(hours=24, seconds=1))
    add_polls(project, "u", end=NOW - timedelta(hours=24))

    uptime = uptime_by_project([project.pk], OVERVIEW_RANGES, NOW)[project.pk]

    assert uptime["24h"] == Uptime(1, 0)
    assert uptime["7d"] == Uptime(2, 1)


def test_a_project_that_started_yesterday_counts_only_its_own_polls(
    make_project, add_polls
):
    project = make_project()
    add_polls(project, "u" * 60 + "dd" + "u" * 58, end=NOW, every=timedelta(minutes=15))

    uptime = uptime_by_project([project.pk], OVERVIEW_RANGES, NOW)[project.pk]

    assert uptime["30d"] == uptime["7d"] == Uptime(120, 2)
    assert uptime["30d"].percent == pytest.approx(100 * 118 / 120)
    assert uptime["24h"] == Uptime(97, 2)


@pytest.mark.parametrize(("status", "percent"), [("u", 100.0), ("d", 0.0)])
def test_all_up_and_all_down_projects(make_project, add_polls, status, percent):
    project = make_project()
    add_polls(project, status * 300, end=NOW, every=timedelta(minutes=5))

    uptime = uptime_by_project([project.pk], OVERVIEW_RANGES, NOW)[project.pk]

    assert [u.percent for u in uptime.values()] == [percent] * 3


def test_a_project_without_polls_has_no_uptime(make_project):
    project = make_project()

    uptime = uptime_by_project([project.pk], OVERVIEW_RANGES, NOW)[project.pk]

    assert set(uptime.values()) == {Uptime(0, 0)}
    assert uptime["24h"].percent is None


def test_whole_hours_come_from_the_rollups(make_project, add_polls):
    project = make_project()
    add_polls(project, "uuu", end=NOW - timedelta(hours=3))
    HourlyRollup.objects.filter(project=project).update(polls=10, failures=4)

    uptime = uptime_by_project([project.pk], OVERVIEW_RANGES, NOW)[project.pk]

    assert uptime["24h"] == Uptime(10, 4)


def test_many_projects_cost_two_queries(
    make_project, add_polls, django_assert_num_queries
):
    projects = [make_project() for _ in range(20)]
    for project in projects:
        add_polls(project, "ud" * 10, end=NOW, every=timedelta(hours=1))
    ids = [project.pk for project in projects]

    with django_assert_num_queries(2):
        uptime = uptime_by_project(ids, RANGES.values(), NOW)

    assert {u["30d"] for u in uptime.values()} == {Uptime(20, 10)}


def test_percent_is_the_share_of_up_polls():
    assert Uptime(8, 2).percent == 75.0
    assert Uptime(0, 0).percent is None

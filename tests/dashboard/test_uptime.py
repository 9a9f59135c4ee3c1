"""uptime_by_project(): the share of up polls per range, from rollups."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from polling.store import DatabaseResultStore
from projects.dashboard.queries.ranges import OVERVIEW_RANGES, RANGES
from projects.dashboard.queries.uptime import Uptime, uptime_by_project
from projects.housekeeping.compaction import compact_rollups
from projects.housekeeping.retention import prune_results
from projects.models import DailyRollup, HourlyRollup, MaintenanceWindow, PollResult
from tests.support.outcomes import T0, outcome

pytestmark = pytest.mark.django_db

# Half past, so every range starts in the middle of an hour.
NOW = datetime(2026, 11, 22, 12, 30, tzinfo=UTC)
EVERY = timedelta(minutes=10)
PER_DAY = 144
DAY = timedelta(days=1)


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
        "90d": Uptime(40 * PER_DAY + 1, 4),
        "1y": Uptime(40 * PER_DAY + 1, 4),
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


@pytest.mark.parametrize(("compacted", "queries"), [(False, 4), (True, 5)])
def test_many_projects_cost_a_few_queries(
    make_project, add_polls, django_assert_num_queries, compacted, queries
):
    projects = [make_project() for _ in range(20)]
    for project in projects:
        add_polls(project, "ud" * 50, end=NOW, every=timedelta(hours=1))
    ids = [project.pk for project in projects]
    if compacted:
        compact_rollups(now=NOW)

    # The maintenance windows, the compaction boundary, daily rollups once
    # there are any, hourly rollups, and the raw polls of the leading
    # part-hours.
    with django_assert_num_queries(queries):
        uptime = uptime_by_project(ids, RANGES.values(), NOW)

    assert {u["30d"] for u in uptime.values()} == {Uptime(100, 50)}


def raw_uptime(project, start: datetime) -> Uptime:
    polls = PollResult.objects.filter(project=project, polled_at__gte=start)
    return Uptime(polls.count(), polls.filter(status="down").count())


def test_uptime_is_the_same_whichever_table_it_comes_from(
    make_project, add_polls, settings
):
    """30 days, 90 days and a year, from hourly rollups and raw polls, then
    again once the days are compacted, the hourly rollups past 31 days and
    the polls past 30 days are gone."""
    project = make_project()
    statuses = "".join("d" if i % 7 == 3 else "u" for i in range(400 * 8))
    add_polls(project, statuses, end=NOW, every=timedelta(hours=3))
    ranges = [RANGES["30d"], RANGES["90d"], RANGES["1y"]]
    expected = {r.key: raw_uptime(project, r.start(NOW)) for r in ranges}

    before = uptime_by_project([project.pk], ranges, NOW)[project.pk]
    settings.HOURLY_RETENTION_DAYS = 31
    compact_rollups(now=NOW)
    prune_results(now=NOW, days=30)
    after = uptime_by_project([project.pk], ranges, NOW)[project.pk]

    assert before == expected == after
    assert expected["1y"].polls > expected["90d"].polls > expected["30d"].polls
    assert not HourlyRollup.objects.filter(hour__lt=NOW - timedelta(days=32)).exists()
    assert not PollResult.objects.filter(
        polled_at__lt=NOW - timedelta(days=30)
    ).exists()
    assert DailyRollup.objects.filter(project=project).count() == 400


def test_the_longest_ranges_start_at_a_utc_midnight():
    for key in ("90d", "1y"):
        start = RANGES[key].start(NOW)
        assert (start.hour, start.minute) == (0, 0)
        assert timedelta(0) < start - (NOW - RANGES[key].length) <= timedelta(days=1)


def test_percent_is_the_share_of_up_polls():
    assert Uptime(8, 2).percent == 75.0
    assert Uptime(0, 0).percent is None


def test_percent_leaves_maintenance_out():
    uptime = Uptime(100, 30, maintenance_polls=20, maintenance_failures=20)

    assert uptime.percent == 100 * 70 / 80
    assert uptime.maintenance_percent == 20.0
    assert Uptime(5, 5, 5, 5).percent is None


def maintenance(project, start: datetime, end: datetime) -> MaintenanceWindow:
    window = MaintenanceWindow.objects.create(
        name="upgrade", starts_at=start, ends_at=end
    )
    window.projects.add(project)
    return window


@pytest.mark.parametrize("compacted", [False, True])
def test_polls_during_maintenance_are_counted_apart(make_project, add_polls, compacted):
    """Two hours down in a window five days ago, one down poll outside
    it: from the hourly rollups, the daily ones and the raw polls."""
    project, other = make_project(), make_project()
    start = NOW - timedelta(days=5, minutes=30)
    for each in (project, other):
        maintenance(each, start, start + timedelta(hours=2))
    other.maintenance_windows.clear()
    statuses = "u" * 100 + "d" * 12 + "u" * 100 + "d"
    for each in (project, other):
        # The first down poll is at the window's start.
        add_polls(each, statuses, end=start + 112 * EVERY, every=EVERY)
    if compacted:
        compact_rollups(now=NOW)

    uptimes = uptime_by_project([project.pk, other.pk], OVERVIEW_RANGES, NOW)

    assert uptimes[project.pk]["7d"] == Uptime(213, 13, 12, 12)
    assert uptimes[project.pk]["7d"].percent == pytest.approx(100 * 200 / 201)
    assert uptimes[other.pk]["7d"] == Uptime(213, 13)


def test_the_leading_part_hour_counts_maintenance_too(make_project, add_polls):
    project = make_project()
    day_ago = NOW - timedelta(days=1)
    maintenance(project, day_ago, day_ago + timedelta(minutes=20))
    add_polls(project, "ddu", end=day_ago + timedelta(minutes=20), every=EVERY)

    uptime = uptime_by_project([project.pk], OVERVIEW_RANGES, NOW)[project.pk]

    assert uptime["24h"] == Uptime(3, 2, 2, 2)
    assert uptime["24h"].percent == 100.0


def test_the_writer_counts_polls_made_during_maintenance(make_project):
    project = make_project()
    maintenance(project, T0 + timedelta(seconds=30), T0 + timedelta(seconds=90))
    store = DatabaseResultStore()
    store.save([outcome(project.pk, up=False, at=at, code=503) for at in (0, 40)])
    store.save([outcome(project.pk, up=at != 60, at=at) for at in (60, 100)])

    rollup = HourlyRollup.objects.get(project=project)
    assert (rollup.polls, rollup.failures) == (4, 3)
    assert (rollup.maintenance_polls, rollup.maintenance_failures) == (2, 2)

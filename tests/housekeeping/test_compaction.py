"""compact_rollups(): finished days of hourly rollups summed into
DailyRollup, and rollups past their retention removed."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from io import StringIO

import pytest

from django.core.management import call_command
from django.db.models import Count, Max, Q, Sum
from django.db.models.functions import TruncDate

from projects.housekeeping.compaction import compact_rollups, newest_compacted_day
from projects.housekeeping.rollups import rebuild_rollups
from projects.models import DailyRollup, HourlyRollup, PollResult
from projects.models.results import utc_midnight

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 20, 0, 30, tzinfo=UTC)
TODAY = date(2026, 11, 20)


def daily_rows() -> list[tuple]:
    return list(
        DailyRollup.objects.order_by("project_id", "day").values_list(
            "project_id",
            "day",
            "polls",
            "failures",
            "responses",
            "response_time_sum_ms",
            "response_time_max_ms",
        )
    )


def daily_from_raw_polls(before: date) -> list[tuple]:
    """The daily sums computed straight from PollResult."""
    rows = (
        PollResult.objects.filter(polled_at__lt=utc_midnight(before))
        .annotate(day=TruncDate("polled_at", tzinfo=UTC))
        .values("project_id", "day")
        .annotate(
            polls=Count("polled_at"),
            failures=Count("polled_at", filter=Q(status="down")),
            responses=Count("response_time_ms"),
            total=Sum("response_time_ms", default=0),
            slowest=Max("response_time_ms"),
        )
        .order_by("project_id", "day")
    )
    return [
        (
            r["project_id"],
            r["day"],
            r["polls"],
            r["failures"],
            r["responses"],
            r["total"],
            r["slowest"],
        )
        for r in rows
    ]


@pytest.fixture
def five_days(make_project, add_polls):
    """Two projects polled every 20 minutes for five days up to NOW, with
    failures and polls that got no response."""
    statuses = ("u" * 17 + "d") * 20
    times = [None if i % 29 == 0 else 40 + i % 300 for i in range(len(statuses))]
    for project in (make_project(), make_project()):
        add_polls(
            project,
            statuses,
            end=NOW,
            every=timedelta(minutes=20),
            response_time_ms=times,
        )


def test_daily_rollups_equal_a_rebuild_from_raw_polls(five_days):
    compacted = compact_rollups(now=NOW)

    assert compacted.days == 5
    assert daily_rows() == daily_from_raw_polls(before=TODAY)
    assert len(daily_rows()) == 10
    assert newest_compacted_day() == TODAY - timedelta(days=1)


def test_compacting_again_changes_nothing(five_days):
    compact_rollups(now=NOW)
    before = daily_rows()

    compacted = compact_rollups(now=NOW)

    assert compacted.days == 1  # the newest compacted day, for late polls
    assert daily_rows() == before


def test_polls_written_late_reach_the_newest_compacted_day(five_days, make_project):
    compact_rollups(now=NOW)
    project = PollResult.objects.first().project
    PollResult.objects.create(
        project=project, polled_at=NOW - timedelta(hours=1, seconds=7), status="down"
    )
    rebuild_rollups(project_ids=[project.pk])

    compact_rollups(now=NOW)

    assert daily_rows() == daily_from_raw_polls(before=TODAY)


def test_hourly_rollups_go_only_past_retention_and_once_compacted(five_days, settings):
    settings.HOURLY_RETENTION_DAYS = 2
    hours = HourlyRollup.objects.count()
    horizon = datetime(2026, 11, 18, tzinfo=UTC)
    old = HourlyRollup.objects.filter(hour__lt=horizon).count()

    compacted = compact_rollups(now=NOW)

    assert compacted.hourly_removed == old > 0
    assert HourlyRollup.objects.count() == hours - old
    assert not HourlyRollup.objects.filter(hour__lt=horizon).exists()
    assert daily_rows() == daily_from_raw_polls(before=TODAY)


def test_without_compaction_no_hourly_rollup_goes(five_days, settings):
    settings.HOURLY_RETENTION_DAYS = 1
    DailyRollup.objects.all().delete()
    hours = HourlyRollup.objects.count()

    # Compaction runs first, so days are summed before their hours go.
    compact_rollups(now=NOW)

    assert DailyRollup.objects.count() == 10
    assert HourlyRollup.objects.count() < hours


def test_zero_keeps_hourly_and_daily_rollups_forever(five_days, settings):
    settings.HOURLY_RETENTION_DAYS = 0
    settings.DAILY_RETENTION_DAYS = 0
    hours = HourlyRollup.objects.count()

    compacted = compact_rollups(now=NOW + timedelta(days=400))

    assert (compacted.hourly_removed, compacted.daily_removed) == (0, 0)
    assert HourlyRollup.objects.count() == hours
    assert DailyRollup.objects.count() == 12  # today's first half hour too


def test_daily_rollups_go_past_their_retention(five_days, settings):
    settings.DAILY_RETENTION_DAYS = 3

    compacted = compact_rollups(now=NOW)

    assert compacted.daily_removed == 4  # two days of two projects
    assert sorted(set(DailyRollup.objects.values_list("day", flat=True))) == [
        date(2026, 11, 17),
        date(2026, 11, 18),
        date(2026, 11, 19),
    ]


def test_the_command_can_recompute_from_a_day(five_days):
    compact_rollups(now=NOW)
    DailyRollup.objects.filter(day=date(2026, 11, 16)).update(polls=0)
    out = StringIO()

    call_command("compact_rollups", "--since", "2026-11-16", stdout=out)

    assert "Compacted" in out.getvalue()
    today = datetime.now(UTC).date()
    assert daily_rows() == daily_from_raw_polls(before=today)


def test_the_command_rejects_a_bad_day():
    with pytest.raises(Exception, match="--since"):
        call_command("compact_rollups", "--since", "yesterday")

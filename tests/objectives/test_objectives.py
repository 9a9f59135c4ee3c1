"""An objective's attainment and budget from the rollups equal the same
formulas over the raw polls; its burn-rate alerts fire once for a
sustained burn and not for a blip. Polls are seeded with an injected
clock: `now` is handed to the code, never read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from django.core.exceptions import ValidationError

from projects.housekeeping.rollups import rebuild_rollups
from projects.models import (
    MaintenanceWindow,
    Notification,
    ObjectiveAlert,
    PollResult,
    Status,
    Tag,
)
from projects.objectives import budget
from projects.objectives.budget import Counts
from projects.objectives.status import objective_status
from tests.support.alerting import make_channel
from tests.support.objectives import MINUTE, NOW, objective, play, seed

pytestmark = pytest.mark.django_db


def test_attainment_and_budget_equal_a_computation_from_raw_polls(make_project):
    project = make_project()
    start = NOW - timedelta(days=7)
    # Down at every 7th poll of the first two days, and during a window.
    seed(
        project,
        start - timedelta(days=1),
        NOW,
        5 * MINUTE,
        down=lambda at: (
            (at.minute % 35 == 0 and at < start + timedelta(days=2))
            or NOW - timedelta(days=3) <= at < NOW - timedelta(days=3, hours=-2)
        ),
    )
    window = MaintenanceWindow.objects.create(
        name="deploy",
        starts_at=NOW - timedelta(days=3),
        ends_at=NOW - timedelta(days=3, hours=-1),
    )
    window.projects.add(project)
    rebuild_rollups()
    slo = objective(project)

    status = objective_status(slo, NOW)

    polls = PollResult.objects.filter(project=project, polled_at__gte=start)
    in_window = polls.filter(
        polled_at__gte=window.starts_at, polled_at__lt=window.ends_at
    )
    total = polls.count() - in_window.count()
    bad = (
        polls.filter(status=Status.DOWN).count()
        - in_window.filter(status=Status.DOWN).count()
    )
    raw = Counts(good=total - bad, total=total)
    assert bad > 0
    assert status.counts == raw
    assert status.attainment_percent == pytest.approx(100 * (total - bad) / total)
    assert status.error_budget_remaining_percent == pytest.approx(
        100 * (1 - bad / (0.01 * total))
    )
    assert status.error_budget_minutes == pytest.approx(7 * 24 * 60 * 0.01)
    assert status.error_budget_remaining_minutes == pytest.approx(
        status.error_budget_minutes * status.error_budget_remaining_percent / 100
    )


def test_a_latency_objective_counts_polls_within_the_threshold(make_project):
    project = make_project()
    seed(
        project,
        NOW - timedelta(hours=5),
        NOW,
        MINUTE,
        ms=lambda at: 900 if at.minute % 10 == 0 else 200,
    )
    rebuild_rollups()
    slo = objective(project, kind="latency", threshold_ms=500, target_percent=95)

    status = objective_status(slo, NOW)

    assert status.counts == Counts(good=270, total=300)
    assert status.attainment_percent == pytest.approx(90)
    assert status.burn_rate_1h == pytest.approx(0.1 / 0.05)


def test_a_calendar_month_starts_on_the_first(make_project):
    project = make_project()
    seed(project, NOW - timedelta(days=25), NOW, timedelta(hours=1))
    rebuild_rollups()
    slo = objective(project, window_days=None, calendar_month=True)

    status = objective_status(slo, NOW)

    assert status.window_start == datetime(2026, 11, 1, tzinfo=UTC)
    assert status.window == timedelta(days=30)
    assert status.counts.total == 19 * 24 + 12  # 00:30 to 11:30 today


def test_a_tags_objective_counts_every_project_of_the_tag(make_project):
    tag = Tag.objects.create(name="shop")
    first, second, other = make_project(), make_project(), make_project()
    first.tags.add(tag)
    second.tags.add(tag)
    for project in (first, second, other):
        seed(project, NOW - timedelta(hours=2), NOW, MINUTE)
    rebuild_rollups()

    status = objective_status(objective(tag=tag), NOW)

    assert status.counts.total == 240


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"kind": "latency"}, "threshold_ms"),
        ({"threshold_ms": 300}, "threshold_ms"),
        ({"window_days": None}, "window_days"),
        ({"calendar_month": True}, "window_days"),
        ({"target_percent": 100}, "target_percent"),
    ],
)
def test_an_objective_that_makes_no_sense_is_refused_on_its_field(
    make_project, fields, field
):
    with pytest.raises(ValidationError) as refused:
        objective(make_project(), **fields)

    assert field in refused.value.message_dict


# Burn-rate alerts ------------------------------------------------------------


def burning(slo) -> list[tuple[str, str]]:
    return list(
        Notification.objects.filter(event__startswith="objective.")
        .order_by("pk")
        .values_list("event", "payload__objective__rule")
    )


@pytest.fixture
def watched(make_project):
    """A project with three days of good polls every 5 minutes, and a 99 %
    objective whose channel is told."""
    project = make_project()
    seed(project, NOW - timedelta(days=3), NOW - timedelta(hours=2), 5 * MINUTE)
    rebuild_rollups()
    slo = objective(project, window_days=30)
    slo.channels.add(make_channel(team=slo.team))
    return project, slo


def test_a_sustained_burn_fires_each_rule_once_and_calms_once(watched):
    project, slo = watched
    start = NOW - timedelta(hours=2)
    burn = (start + timedelta(hours=1), start + timedelta(hours=1, minutes=30))

    # An hour good, 30 minutes down, two and a half hours good.
    play(project, start, 240, down=lambda at: burn[0] <= at < burn[1])

    events = burning(slo)
    assert events.count(("objective.burning", "page-1h")) == 1
    assert events.count(("objective.calm", "page-1h")) == 1
    assert ObjectiveAlert.objects.filter(rule="page-1h").count() == 1
    assert len(events) == len(set(events))


def test_a_short_blip_fires_nothing(watched):
    project, slo = watched
    start = NOW - timedelta(hours=2)

    play(project, start, 120, down=lambda at: at == start + timedelta(minutes=30))

    assert burning(slo) == []
    assert not ObjectiveAlert.objects.exists()


def test_burn_rates_follow_the_formula(watched):
    _, slo = watched
    status = objective_status(slo, NOW - timedelta(hours=2))
    assert status.burn_rate_1h == budget.burn_rate(Counts(12, 12), 99) == 0
    assert status.budget_exhausted_at is None

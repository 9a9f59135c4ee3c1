"""The writer's heartbeat step: one stored result per missed deadline."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.utils import timezone

from polling.engine.heartbeats import missed_ping, ping_outcome
from polling.engine.types import Task
from polling.store import DatabaseResultStore
from projects.models import PollResult, Project
from tests.support.factories import load_target

pytestmark = pytest.mark.django_db


@pytest.fixture
def overdue(make_project):
    """A heartbeat project whose deadline passed a second ago."""
    project = make_project(kind="heartbeat", url="", interval=1, interval_unit="hours")
    deadline = timezone.now() - timedelta(seconds=1)
    Project.objects.filter(pk=project.pk).update(ping_deadline=deadline)
    return project


def check(project: Project):
    target = load_target(project.pk)
    return missed_ping(Task(target, target.ping_deadline), timezone.now())


def ping(project: Project, *, at=None):
    return ping_outcome(
        project.pk,
        at=at or timezone.now(),
        failed=False,
        message="",
        interval_seconds=3600,
        grace_seconds=60,
    )


def test_a_missed_deadline_is_stored_and_moved_one_interval_on(overdue):
    outcome = check(overdue)

    assert DatabaseResultStore().save([outcome]) == 1

    result = PollResult.objects.get(project=overdue)
    assert (result.status, result.error_message) == ("down", "no ping within 1 h 1 min")
    overdue.refresh_from_db()
    assert overdue.ping_deadline == outcome.deadline.passed + timedelta(hours=1)
    assert overdue.last_status == "down"


def test_the_same_miss_from_two_writers_is_stored_once(overdue):
    outcome = check(overdue)

    DatabaseResultStore().save([outcome])
    DatabaseResultStore().save([outcome])

    assert PollResult.objects.filter(project=overdue).count() == 1


def test_a_miss_is_dropped_when_a_ping_came_first(overdue):
    outcome = check(overdue)
    DatabaseResultStore().save([ping(overdue)])

    assert DatabaseResultStore().save([outcome]) == 0

    assert list(PollResult.objects.values_list("status", flat=True)) == ["up"]


def test_a_ping_sets_the_deadline_even_when_the_stored_one_is_later(overdue):
    Project.objects.filter(pk=overdue.pk).update(
        ping_deadline=timezone.now() + timedelta(days=1)
    )
    now = timezone.now()

    DatabaseResultStore().save([ping(overdue, at=now)])

    overdue.refresh_from_db()
    assert overdue.ping_deadline == now + timedelta(seconds=3660)


def test_a_batch_keeps_the_other_outcomes_when_a_miss_is_dropped(overdue, make_project):
    stale = check(overdue)
    DatabaseResultStore().save([ping(overdue)])
    other = ping(make_project(kind="heartbeat", url=""))

    assert DatabaseResultStore().save([stale, other]) == 1
    assert PollResult.objects.count() == 2

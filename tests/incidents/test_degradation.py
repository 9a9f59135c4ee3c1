"""The degraded step: up but slow, decided in the writer's transaction and
told once per episode, through the real store."""

from __future__ import annotations

from datetime import timedelta

import pytest

from polling.store import DatabaseResultStore
from projects.incidents.degradation import Change, Streaks, step
from projects.incidents.machine import Poll
from projects.models import Incident, Notification, Project
from tests.support.alerting import make_channel, queued_events
from tests.support.outcomes import T0, outcome

STEP = 20


def poll(ms: int | None, up: bool = True) -> Poll:
    return Poll(1, T0, up, "", 200, ms, None)


def run(script: str, *, failures: int = 3, recoveries: int = 2) -> list:
    """Poll response times by letter (s: 900 ms, f: 100 ms, d: down, m: slow
    in maintenance) through step(); the changes, in order."""
    streaks, changes = Streaks(), []
    for letter in script:
        ms = {"s": 900, "f": 100, "d": None, "m": 900}[letter]
        streaks, change = step(
            streaks,
            poll(ms, up=letter != "d"),
            limit_ms=500,
            failures=failures,
            recoveries=recoveries,
            in_maintenance=letter == "m",
        )
        changes.append(change and change.value)
    return [c for c in changes if c]


@pytest.mark.parametrize(
    ("script", "changes"),
    [
        ("ss", []),
        ("sss", ["started"]),
        ("sssss", ["started"]),
        ("ssfs", []),  # one fast poll starts the count again
        ("ssds", []),  # a down poll is neither slow nor fast
        ("ssms", []),  # maintenance skips
        ("sssf", ["started"]),
        ("sssff", ["started", "ended"]),
        ("sssfsff", ["started", "ended"]),
        ("sssffsss", ["started", "ended", "started"]),
    ],
)
def test_each_of_the_last_polls_must_be_slow(script, changes):
    assert run(script) == changes


def test_a_poll_at_the_limit_is_not_slow():
    streaks, change = step(Streaks(), poll(500), limit_ms=500, failures=1, recoveries=1)
    assert change is None
    assert streaks.slow == 0
    assert (
        step(Streaks(), poll(501), limit_ms=500, failures=1, recoveries=1)[1]
        is Change.STARTED
    )


# Through the writer ----------------------------------------------------------


def save(store, project, times: list[int | None], start: int) -> None:
    store.save(
        [
            outcome(project.pk, at=(start + i) * STEP, ms=ms, up=ms is not None)
            for i, ms in enumerate(times)
        ]
    )


@pytest.fixture
def slow_project(make_project):
    project = make_project(degraded_after_ms=500, failure_threshold=3)
    opted_in = make_channel(team=project.team, notify_degraded=True)
    not_asked = make_channel(team=project.team)
    project.channels.add(opted_in, not_asked)
    return project, opted_in, not_asked


@pytest.mark.django_db
def test_a_slow_streak_opens_one_episode_told_to_channels_that_asked(slow_project):
    project, opted_in, not_asked = slow_project
    store = DatabaseResultStore()

    save(store, project, [900, 900], 0)
    project.refresh_from_db()
    assert project.degraded_since is None

    save(store, project, [900, 950, 990], 2)

    project.refresh_from_db()
    assert project.degraded_since == T0 + timedelta(seconds=2 * STEP)
    assert project.state == Project.State.UP
    incident = Incident.objects.get(project=project, kind=Incident.Kind.DEGRADED)
    assert incident.resolved_at is None
    assert queued_events(channel=opted_in) == ["incident.opened"]
    assert queued_events(channel=not_asked) == []


@pytest.mark.django_db(transaction=True)
def test_degraded_episodes_are_told_once_across_a_poller_restart(slow_project):
    project, opted_in, _ = slow_project
    first = DatabaseResultStore()
    batch = [900, 900, 900, 900]
    save(first, project, batch, 0)
    first.close()

    # A restarted poller: a new store and connection, the last batch sent
    # again (its commit's answer was lost), then more slow polls.
    second = DatabaseResultStore()
    save(second, project, batch, 0)
    save(second, project, [900, 900, 900], 4)
    assert queued_events(channel=opted_in) == ["incident.opened"]

    # Fast again: the end told once, to the channel told of the start.
    save(second, project, [100, 100, 100], 7)
    second.close()
    third = DatabaseResultStore()
    save(third, project, [100, 100], 10)

    assert queued_events(channel=opted_in) == [
        "incident.opened",
        "incident.resolved",
    ]
    assert Notification.objects.count() == 2
    assert Incident.objects.filter(kind=Incident.Kind.DEGRADED).count() == 1
    project.refresh_from_db()
    assert project.degraded_since is None


@pytest.mark.django_db
def test_a_project_without_a_limit_is_never_degraded(make_project):
    project = make_project(failure_threshold=1)

    save(DatabaseResultStore(), project, [60_000] * 5, 0)

    project.refresh_from_db()
    assert project.degraded_since is None
    assert not Incident.objects.exists()


@pytest.mark.django_db
def test_taking_the_limit_away_ends_the_episode_at_the_next_poll(slow_project):
    project, opted_in, _ = slow_project
    store = DatabaseResultStore()
    save(store, project, [900, 900, 900], 0)
    Project.objects.filter(pk=project.pk).update(degraded_after_ms=None)

    save(store, project, [900], 3)

    project.refresh_from_db()
    assert project.degraded_since is None
    assert queued_events(channel=opted_in) == ["incident.opened", "incident.resolved"]

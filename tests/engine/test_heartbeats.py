"""Heartbeat outcomes: a ping, a failure ping and a missed deadline."""

from __future__ import annotations

from datetime import timedelta

import pytest

from polling.engine.heartbeats import (
    first_due,
    human_duration,
    missed_ping,
    ping_outcome,
)
from polling.engine.probe import probe
from polling.engine.types import DeadlineMove, Target, Task
from tests.support.outcomes import T0


def test_a_ping_is_up_keeps_its_body_and_sets_the_next_deadline():
    outcome = ping_outcome(
        3,
        at=T0,
        failed=False,
        message="backup: 2 GB",
        interval_seconds=3600,
        grace_seconds=300,
    )

    assert outcome.up is True
    assert (outcome.error, outcome.message) == ("", "backup: 2 GB")
    assert outcome.deadline == DeadlineMove(to=T0 + timedelta(minutes=65))
    assert outcome.is_missed_ping is False


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ("", "failure reported by ping"),
        ("disk full", "failure reported by ping: disk full"),
    ],
)
def test_a_failure_ping_is_down_with_its_body_as_the_reason(message, error):
    outcome = ping_outcome(
        3, at=T0, failed=True, message=message, interval_seconds=60, grace_seconds=0
    )

    assert outcome.up is False
    assert (outcome.error, outcome.message) == (error, "")


def heartbeat(deadline=T0, interval=3600, grace=300) -> Target:
    return Target(
        project_id=4,
        url="",
        heartbeat=True,
        interval_seconds=interval,
        grace_seconds=grace,
        ping_deadline=deadline,
    )


def test_a_missed_deadline_is_down_and_moves_the_deadline_one_interval_on():
    now = T0 + timedelta(seconds=1)

    outcome = missed_ping(Task(heartbeat(), T0), now)

    assert outcome.up is False
    assert outcome.error == "no ping within 1 h 5 min"
    assert outcome.started_at == now
    assert outcome.deadline == DeadlineMove(to=T0 + timedelta(hours=1), passed=T0)
    assert outcome.is_missed_ping is True


def test_probe_checks_a_heartbeat_target_without_touching_the_network():
    outcome = probe(None, Task(heartbeat(), T0))

    assert outcome.error == "no ping within 1 h 5 min"


def test_a_heartbeat_target_is_first_due_at_its_deadline():
    assert first_due(heartbeat(), T0 - timedelta(seconds=90)) == 90
    assert first_due(heartbeat(), T0 + timedelta(seconds=5)) == 0
    assert first_due(Target(project_id=1, url="http://x/"), T0) is None


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (45, "45 s"),
        (90, "1 min 30 s"),
        (3900, "1 h 5 min"),
        (90000, "1 d 1 h"),
        (86400, "1 d"),
    ],
)
def test_durations_read_as_people_say_them(seconds, text):
    assert human_duration(seconds) == text

"""The decision table alone: streaks in, streaks and changes out."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from projects.incidents.machine import (
    DOWN,
    PENDING,
    UP,
    Change,
    Poll,
    Streak,
    Thresholds,
    advance,
    run,
)
from tests.support.outcomes import T0


def polls(marks: str) -> list[Poll]:
    """ "u" up, "d" down, 20 s apart from T0."""
    return [
        Poll(
            1,
            T0 + timedelta(seconds=20 * i),
            mark == "u",
            "" if mark == "u" else f"e{i}",
        )
        for i, mark in enumerate(marks)
    ]


@pytest.mark.parametrize(
    ("failure", "recovery", "marks", "changes", "state"),
    [
        (3, 1, "", [], ""),
        (3, 1, "u", [], UP),
        (3, 1, "d", [], PENDING),
        (3, 1, "dd", [], PENDING),
        (3, 1, "ddd", ["opened"], DOWN),
        (3, 1, "dddd", ["opened", "failed"], DOWN),
        (3, 1, "dddu", ["opened", "resolved"], UP),
        (3, 1, "ddudd", [], PENDING),
        (1, 1, "dudu", ["opened", "resolved", "opened", "resolved"], UP),
        (3, 2, "dddu", ["opened"], DOWN),
        (3, 2, "ddduu", ["opened", "resolved"], UP),
        (3, 2, "ddduduu", ["opened", "failed", "resolved"], UP),
        (10, 1, "d" * 9, [], PENDING),
        (10, 1, "d" * 10, ["opened"], DOWN),
    ],
)
def test_sequences_give_exactly_these_changes(failure, recovery, marks, changes, state):
    effect = run(Streak(), polls(marks), Thresholds(failure, recovery))

    assert [t.change.value for t in effect.transitions] == changes
    assert effect.after.state == state


def test_an_opening_remembers_the_first_failure_of_the_streak():
    sequence = polls("udddd")
    effect = run(Streak(), sequence, Thresholds(3, 1))

    opened = effect.transitions[0]
    assert opened.change is Change.OPENED
    assert opened.poll == sequence[3]
    assert opened.streak.failing_since == sequence[1].at
    assert opened.streak.failures == 3


def test_a_streak_goes_on_from_what_was_stored():
    """Two failures stored, one more: the threshold of 3 is reached."""
    stored = Streak(PENDING, 2, 0, T0)
    step = advance(stored, Poll(1, T0 + timedelta(minutes=1), False, "x"), Thresholds())

    assert step.change is Change.OPENED
    assert step.streak == Streak(DOWN, 3, 0, T0)


def test_polls_in_maintenance_are_skipped():
    sequence = polls("ddddd")
    effect = run(
        Streak(),
        sequence,
        Thresholds(3, 1),
        in_maintenance=lambda poll: poll.at < sequence[3].at,
    )

    assert effect.transitions == []
    assert effect.after.failures == 2
    assert effect.after.failing_since == sequence[3].at


@pytest.mark.parametrize(
    ("before", "marks", "started", "stopped"),
    [
        (Streak(), "d", True, False),
        (Streak(UP), "u", False, False),
        (Streak(PENDING, 1, 0, T0), "d", False, False),
        (Streak(PENDING, 1, 0, T0), "u", False, True),
        (Streak(UP), "du", True, True),
    ],
)
def test_it_tells_when_a_project_began_or_stopped_failing(
    before, marks, started, stopped
):
    effect = run(before, polls(marks), Thresholds())

    assert effect.started_failing is started
    assert effect.stopped_failing is stopped


def every_sequence(length: int) -> list[str]:
    return ["".join(marks) for marks in itertools.product("ud", repeat=length)]


@pytest.mark.parametrize("thresholds", [Thresholds(3, 1), Thresholds(1, 2)])
@pytest.mark.parametrize("marks", every_sequence(6))
def test_failing_since_is_set_exactly_while_failing(thresholds, marks):
    """The reachability check counts failing projects by failing_since."""
    streak = Streak()
    for poll in polls(marks):
        streak = advance(streak, poll, thresholds).streak
        assert (streak.failing_since is not None) is streak.failing


@pytest.mark.parametrize("marks", every_sequence(5))
def test_a_run_ends_where_advancing_poll_by_poll_ends(marks):
    """run() skips advance() for an up poll of a settled project."""
    thresholds = Thresholds(2, 2)
    streak, changes = Streak(UP), []
    for poll in polls(marks):
        step = advance(streak, poll, thresholds)
        streak = step.streak
        changes += [step.change] if step.change else []

    effect = run(Streak(UP), polls(marks), thresholds)

    assert effect.after == streak
    assert [t.change for t in effect.transitions] == changes

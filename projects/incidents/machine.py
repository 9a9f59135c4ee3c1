"""When is a project down: the decision table, one poll at a time.

Pure functions over plain values, so every sequence of polls can be tested
without a database. The writer keeps each project's Streak in its row and
feeds it the polls it stores (projects/incidents/states.py).

    state    poll  counts            -> state    change
    -        up                      -> up
    up       up                      -> up
    pending  up    (streak forgotten)-> up
    any*     down  failures < F      -> pending
    any*     down  failures = F      -> down     OPENED
    down     down                    -> down     FAILED
    down     up    successes < R     -> down
    down     up    successes = R     -> up       RESOLVED

    * any state but down; F and R are the project's failure and recovery
    thresholds. Polls during a maintenance window are skipped altogether.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

UP = "up"
PENDING = "pending"
DOWN = "down"


class Poll(NamedTuple):
    """One stored poll, as the incident logic sees it. A named tuple, not
    a frozen dataclass: the writer makes one per poll, and a frozen
    dataclass takes twice as long to make."""

    project_id: int
    at: datetime
    up: bool
    error: str = ""
    status_code: int | None = None
    response_time_ms: int | None = None
    # When the certificate the poll saw expires (https only); the state
    # step keeps it on the project.
    tls_expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Thresholds:
    failure: int = 3
    recovery: int = 1


@dataclass(frozen=True, slots=True)
class Streak:
    """What a project's row remembers between batches."""

    state: str = ""  # "" until the first poll, then UP, PENDING or DOWN
    failures: int = 0
    successes: int = 0
    failing_since: datetime | None = None

    @property
    def failing(self) -> bool:
        return self.failures > 0


# Up, with nothing to remember: most projects, most of the time.
SETTLED = Streak(UP)


class Change(enum.Enum):
    OPENED = "opened"  # the failure threshold was reached
    FAILED = "failed"  # another failed poll while an incident is open
    RESOLVED = "resolved"  # the recovery threshold was reached


@dataclass(frozen=True, slots=True)
class Transition:
    change: Change | None
    poll: Poll
    streak: Streak  # the streak after the poll
    # The poll's error already says why, region by region (regions.py):
    # the incident keeps it rather than the first failed poll's.
    described: bool = False


def advance(streak: Streak, poll: Poll, thresholds: Thresholds) -> Transition:
    """The streak after one poll, and what changed for incidents (a
    change of None: nothing)."""
    if poll.up:
        return _after_success(streak, poll, thresholds)
    return _after_failure(streak, poll, thresholds)


def _after_success(streak: Streak, poll: Poll, thresholds: Thresholds) -> Transition:
    if streak.state != DOWN:
        return Transition(None, poll, SETTLED)
    successes = streak.successes + 1
    if successes >= thresholds.recovery:
        return Transition(Change.RESOLVED, poll, SETTLED)
    return Transition(None, poll, Streak(DOWN, 0, successes, None))


def _after_failure(streak: Streak, poll: Poll, thresholds: Thresholds) -> Transition:
    failures = streak.failures + 1
    since = streak.failing_since if streak.failing else poll.at
    if streak.state == DOWN:
        return Transition(Change.FAILED, poll, Streak(DOWN, failures, 0, since))
    if failures >= thresholds.failure:
        return Transition(Change.OPENED, poll, Streak(DOWN, failures, 0, since))
    return Transition(None, poll, Streak(PENDING, failures, 0, since))


@dataclass(slots=True)
class Effect:
    """What a run of polls did to one project."""

    before: Streak
    after: Streak
    transitions: list[Transition] = field(default_factory=list)
    started_failing: bool = False
    stopped_failing: bool = False


def run(
    streak: Streak,
    polls: Iterable[Poll],
    thresholds: Thresholds,
    *,
    in_maintenance: Callable[[Poll], bool] = lambda poll: False,
) -> Effect:
    """Feed one project's polls, oldest first, through advance(); polls
    during maintenance are skipped."""
    effect = Effect(before=streak, after=streak)
    for poll in polls:
        if in_maintenance(poll):
            continue
        if poll.up and effect.after == SETTLED:
            continue  # what advance() would say, for a fraction of the work
        step = advance(effect.after, poll, thresholds)
        effect.started_failing |= not effect.after.failing and not poll.up
        effect.stopped_failing |= effect.after.failing and poll.up
        effect.after = step.streak
        if step.change is not None:
            effect.transitions.append(step)
    return effect

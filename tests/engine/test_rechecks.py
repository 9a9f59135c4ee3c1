"""Reactive rescheduling: a failing project is polled again sooner until it
is confirmed down (or, recovering, confirmed up), then its cadence goes on.
The clocks are fake: nothing sleeps."""

from __future__ import annotations

import queue
from datetime import timedelta

from polling.engine.scheduler import Scheduler
from polling.engine.types import Outcome, Target
from tests.support.scheduling import START, FakeClock, drain, make_scheduler


def watched(project_id: int = 1, *, interval: float = 300, failure=3, recovery=1):
    return Target(
        project_id=project_id,
        url="http://127.0.0.1/",
        interval_seconds=interval,
        failure_threshold=failure,
        recovery_threshold=recovery,
    )


def outcome_of(task, *, up: bool) -> Outcome:
    return Outcome(task.target.project_id, up, task.due_at, task.due_at)


class Run:
    """A scheduler with one project; `poll(up)` waits (on the fake clock)
    until its next poll is due, dispatches it and reports its outcome."""

    def __init__(self, target: Target, *, recheck: float = 20) -> None:
        self.clock = FakeClock()
        self.tasks: queue.Queue = queue.Queue()
        self.scheduler = Scheduler(
            self.tasks,
            recheck_seconds=recheck,
            clock=self.clock.monotonic,
            wall_clock=self.clock.wall,
        )
        self.scheduler.add(target)
        self.polls = []

    def poll(self, *, up: bool):
        self.clock.advance(self.scheduler.due_in(1))
        self.scheduler.dispatch_due()
        [task] = drain(self.tasks)
        self.polls.append(task)
        self.scheduler.poll_finished(task.target.project_id, outcome_of(task, up=up))
        return task

    def offsets(self) -> list[float]:
        """When each poll was due, in seconds after the first."""
        return [(t.due_at - START).total_seconds() for t in self.polls]


def test_a_failing_project_is_polled_again_after_20_s_until_confirmed():
    run = Run(watched(interval=300, failure=3))
    for up in (True, False, False, False, False):
        run.poll(up=up)

    # Up at 0; down at 300, re-checked at 320 and 340 (the third failure
    # confirms it), then back on the 5-minute grid.
    assert run.offsets() == [0, 300, 320, 340, 600]
    assert [t.recheck for t in run.polls] == [False, False, True, True, False]
    assert run.scheduler.rechecked == 2


def test_a_success_while_pending_returns_to_the_cadence():
    run = Run(watched(interval=300, failure=3))
    for up in (False, True, True):
        run.poll(up=up)

    assert run.offsets() == [0, 20, 300]


def test_a_recovering_project_is_rechecked_until_the_recovery_threshold():
    run = Run(watched(interval=300, failure=1, recovery=3))
    for up in (False, True, True, True, True):
        run.poll(up=up)

    assert run.offsets() == [0, 300, 320, 340, 600]


def test_a_threshold_of_one_never_rechecks():
    run = Run(watched(interval=300, failure=1, recovery=1))
    for up in (False, False, True, True):
        run.poll(up=up)

    assert run.offsets() == [0, 300, 600, 900]
    assert run.scheduler.rechecked == 0


def test_a_short_interval_is_its_own_recheck():
    run = Run(watched(interval=15, failure=3))
    for up in (False, False, False):
        run.poll(up=up)

    assert run.offsets() == [0, 15, 30]
    assert run.scheduler.rechecked == 0


def test_the_recheck_delay_is_a_knob():
    run = Run(watched(interval=300, failure=2), recheck=45)
    run.poll(up=False)

    assert run.scheduler.due_in(1) == 45


def test_a_poll_without_an_outcome_changes_nothing():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(watched(interval=300))
    scheduler.dispatch_due()
    drain(tasks)

    scheduler.poll_finished(1)

    assert scheduler.due_in(1) == 300


def test_an_edited_project_drops_its_recheck_and_starts_afresh():
    run = Run(watched(interval=300, failure=3))
    run.poll(up=False)
    assert run.scheduler.due_in(1) == 20
    run.clock.advance(5)

    run.scheduler.add(watched(interval=600, failure=3))

    assert run.scheduler.due_in(1) == 0
    run.scheduler.dispatch_due()
    [task] = drain(run.tasks)
    assert task.recheck is False
    assert task.due_at == START + timedelta(seconds=5)
    assert run.scheduler.due_in(1) == 600


def test_a_removed_project_forgets_its_recheck():
    run = Run(watched(interval=300, failure=3))
    run.poll(up=False)

    run.scheduler.remove(1)

    assert run.scheduler.due_in(1) is None
    run.clock.advance(30)
    run.scheduler.dispatch_due()
    assert drain(run.tasks) == []


def test_rechecks_are_skipped_while_half_the_slots_are_busy():
    # Two hanging polls hold the two slots re-checks may use: the third
    # project's re-check is skipped, and its regular poll confirms it.
    clock = FakeClock()
    tasks: queue.Queue = queue.Queue()
    scheduler = Scheduler(
        tasks, recheck_slots=2, clock=clock.monotonic, wall_clock=clock.wall
    )
    for project_id in (1, 2, 3):
        scheduler.add(watched(project_id, interval=300))
    scheduler.dispatch_due()
    first = {task.target.project_id: task for task in drain(tasks)}
    scheduler.poll_finished(3, outcome_of(first[3], up=False))

    clock.advance(20)
    scheduler.dispatch_due()
    assert drain(tasks) == []
    assert (scheduler.skipped_rechecks, scheduler.rechecked) == (1, 0)
    assert scheduler.due_in(3) == 280

    for project_id in (1, 2):
        scheduler.poll_finished(project_id, outcome_of(first[project_id], up=True))
    clock.advance(280)
    scheduler.dispatch_due()
    regular = {task.target.project_id: task for task in drain(tasks)}
    for project_id, task in regular.items():
        scheduler.poll_finished(project_id, outcome_of(task, up=project_id != 3))
    clock.advance(20)
    scheduler.dispatch_due()
    [recheck] = drain(tasks)
    assert (recheck.target.project_id, recheck.recheck) == (3, True)
    assert (scheduler.skipped_rechecks, scheduler.rechecked) == (1, 1)

"""The scheduler checks a heartbeat project at its deadline."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from polling.engine.types import Target
from tests.support.scheduling import START, FakeClock, drain, make_scheduler


def heartbeat(project_id: int, deadline_in: float, interval: float = 60) -> Target:
    return Target(
        project_id=project_id,
        url="",
        interval_seconds=interval,
        heartbeat=True,
        grace_seconds=10,
        ping_deadline=START + timedelta(seconds=deadline_in),
    )


def test_a_heartbeat_project_is_checked_at_its_deadline_not_at_once():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(heartbeat(1, deadline_in=45))

    clock.advance(44.9)
    scheduler.dispatch_due()
    assert drain(tasks) == []

    clock.advance(0.1)
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.target.project_id == 1
    assert task.due_at == START + timedelta(seconds=45)


def test_loaded_heartbeat_projects_keep_their_deadlines_instead_of_a_spread():
    clock = FakeClock()
    scheduler, _ = make_scheduler(clock, spread=60)

    scheduler.replace_all([heartbeat(1, deadline_in=300), heartbeat(2, deadline_in=-5)])

    assert scheduler.due_in(1) == 300
    assert scheduler.due_in(2) == 0


def test_a_moved_deadline_moves_the_check():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    first = heartbeat(1, deadline_in=30)
    scheduler.add(first)
    clock.advance(30)
    scheduler.dispatch_due()
    drain(tasks)
    scheduler.poll_finished(1)

    # A ping came: the re-read target has a later deadline.
    scheduler.add(replace(first, ping_deadline=START + timedelta(seconds=200)))

    assert scheduler.due_in(1) == 170

"""The scheduler's windows: exact wall-clock steps, the cadence continued
from a project's last stored window, and no dispatch outside the trust
window of the poller's leases."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from tests.support.scheduling import START, FakeClock, drain, make_scheduler, target


def test_windows_follow_each_other_by_exactly_the_interval():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(target(1, interval=10))
    windows = []
    for _ in range(4):
        scheduler.dispatch_due()
        windows += [task.due_at for task in drain(tasks)]
        scheduler.poll_finished(1)
        clock.advance(10.003)  # a little late each time
    assert windows == [START + timedelta(seconds=10 * i) for i in range(4)]


def test_a_project_taken_over_continues_after_its_last_stored_window():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    last = START - timedelta(seconds=4)
    scheduler.replace_all([replace(target(1, interval=10), last_window=last)])

    clock.advance(5.9)
    scheduler.dispatch_due()
    assert drain(tasks) == []
    clock.advance(0.1)
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.due_at == last + timedelta(seconds=10)
    assert scheduler.continued == 1


def test_a_window_already_begun_is_polled_at_once_and_late():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    last = START - timedelta(seconds=13)
    scheduler.replace_all([replace(target(1, interval=10), last_window=last)])
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.due_at == last + timedelta(seconds=10)


def test_a_begun_window_that_ends_before_its_dispatch_is_polled_not_skipped():
    """A window that began almost an interval before the takeover, and
    ended by the time the scheduler took it (a loaded machine): polled
    late under its own window, not counted a missed tick (the fleet pause
    test lost a window so in CI)."""
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    last = START - timedelta(seconds=19.9)  # its next window ends in 0.1 s
    scheduler.replace_all([replace(target(1, interval=10), last_window=last)])
    clock.advance(0.2)
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.due_at == last + timedelta(seconds=10)
    assert scheduler.skipped_late == 0
    scheduler.poll_finished(1)
    scheduler.dispatch_due()
    assert [t.due_at for t in drain(tasks)] == [last + timedelta(seconds=20)]


def test_a_window_that_ended_less_than_an_interval_ago_is_polled_late_then_the_next():
    """The window a stopped poller was polling when it stopped: its taker
    polls it late, once, and goes on on the same grid (issue #39: it used
    to start afresh, and one or two windows were never polled)."""
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    last = START - timedelta(seconds=25)
    scheduler.replace_all([replace(target(1, interval=10), last_window=last)])
    scheduler.dispatch_due()
    [late] = drain(tasks)
    # The next window is due too: it waits for the late poll to end
    # instead of being skipped as busy.
    clock.advance(0.5)
    scheduler.dispatch_due()
    assert drain(tasks) == []
    scheduler.poll_finished(1)
    scheduler.dispatch_due()
    [current] = drain(tasks)
    assert late.due_at == last + timedelta(seconds=10)
    assert current.due_at == last + timedelta(seconds=20)
    assert (scheduler.skipped_late, scheduler.skipped_busy) == (0, 0)
    assert scheduler.continued == 1


def test_a_late_window_dropped_unpolled_still_lets_the_next_one_come():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    last = START - timedelta(seconds=25)
    scheduler.replace_all([replace(target(1, interval=10), last_window=last)])
    scheduler.dispatch_due()
    drain(tasks)
    scheduler.poll_finished(1, None)  # e.g. the shard was lost meanwhile
    scheduler.dispatch_due()
    [current] = drain(tasks)
    assert current.due_at == last + timedelta(seconds=20)


def test_a_project_unpolled_for_two_whole_windows_starts_afresh():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock, spread=0)
    last = START - timedelta(seconds=30)
    scheduler.replace_all([replace(target(1, interval=10), last_window=last)])
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.due_at == START
    assert scheduler.continued == 0


def test_a_reload_does_not_count_a_new_last_window_as_a_change():
    clock = FakeClock()
    scheduler, _tasks = make_scheduler(clock)
    scheduler.replace_all([target(1)])
    summary = scheduler.replace_all([replace(target(1), last_window=START)])
    assert summary.updated == 0


def test_nothing_is_dispatched_past_the_trust_deadline():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(target(1, interval=10))
    scheduler.trust_until(clock.now)
    scheduler.dispatch_due()
    assert drain(tasks) == []

    scheduler.trust_until(clock.now + 12)
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.due_at == START

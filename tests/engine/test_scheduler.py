from __future__ import annotations

import itertools
import queue
import threading
import time
from datetime import timedelta

from polling.engine.scheduler import DISPATCH_TICK_SECONDS, RELOAD_CHUNK, Scheduler
from tests.support.outcomes import outcome
from tests.support.scheduling import START, FakeClock, drain, make_scheduler, target
from tests.support.waiting import wait_until


def test_a_new_project_is_due_at_once():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    assert scheduler.add(target(1)) is True
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.target.project_id == 1
    assert task.due_at == START


def test_cadence_does_not_drift():
    """Each due time is the previous due time plus the interval, however
    late the dispatch ran."""
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(target(1, interval=10))
    due_times = []
    for late in (0.0, 0.7, 0.3, 0.9, 0.1):
        wait = scheduler.dispatch_due()
        clock.advance(wait + late)
        for task in drain(tasks):
            due_times.append(task.due_at)
            scheduler.poll_finished(1)
    gaps = {(b - a).total_seconds() for a, b in itertools.pairwise(due_times)}
    assert gaps == {10.0}
    assert len(due_times) == 5


def test_dispatch_reports_the_wait_until_the_next_due_time():
    clock = FakeClock()
    scheduler, _tasks = make_scheduler(clock)
    scheduler.add(target(1, interval=10))
    scheduler.dispatch_due()
    clock.advance(3)
    assert scheduler.dispatch_due() == 7.0


def test_a_tick_is_skipped_while_the_previous_poll_runs():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(target(1, interval=10))
    scheduler.dispatch_due()
    assert len(drain(tasks)) == 1
    clock.advance(10)
    scheduler.dispatch_due()  # the first poll has not finished
    assert drain(tasks) == []
    assert scheduler.skipped_busy == 1
    scheduler.poll_finished(1)
    clock.advance(10)
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.due_at == START + timedelta(seconds=20)


def test_after_a_stall_it_skips_missed_ticks_instead_of_bursting():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(target(1, interval=10))
    scheduler.dispatch_due()
    drain(tasks)
    scheduler.poll_finished(1)
    clock.advance(35)  # due at 10, 20 and 30 have all passed
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.due_at == START + timedelta(seconds=30)
    assert scheduler.skipped_late == 2
    assert scheduler.due_in(1) == 5.0


def test_removing_a_project_stops_its_polls():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(target(1))
    scheduler.add(target(2))
    assert scheduler.remove(1) is True
    assert scheduler.remove(1) is False
    scheduler.dispatch_due()
    assert [t.target.project_id for t in drain(tasks)] == [2]
    assert scheduler.project_count == 1


def test_a_changed_project_is_polled_at_once_then_on_its_new_cadence():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(target(1, interval=3600, url="http://127.0.0.1/old"))
    scheduler.dispatch_due()
    drain(tasks)
    scheduler.poll_finished(1)
    clock.advance(4)
    assert scheduler.add(target(1, interval=10, url="http://127.0.0.1/new")) is False
    scheduler.dispatch_due()
    [task] = drain(tasks)
    assert task.target.url == "http://127.0.0.1/new"
    assert task.due_at == START + timedelta(seconds=4)
    assert scheduler.due_in(1) == 10.0


def test_re_adding_an_unchanged_project_keeps_its_time():
    clock = FakeClock()
    scheduler, _tasks = make_scheduler(clock)
    scheduler.add(target(1, interval=10))
    scheduler.dispatch_due()
    clock.advance(4)
    scheduler.add(target(1, interval=10))
    assert scheduler.due_in(1) == 6.0


def test_a_load_spreads_first_polls_evenly_over_the_window():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock, spread=60)
    summary = scheduler.replace_all(target(pid, interval=300) for pid in range(1, 601))
    assert (summary.added, summary.updated, summary.removed) == (600, 0, 0)
    per_second = []
    for _ in range(61):
        scheduler.dispatch_due()
        per_second.append(len(drain(tasks)))
        clock.advance(1)
    assert sum(per_second) == 600  # everyone is polled within the window
    assert max(per_second) == 10  # and never more than their share at once


def test_the_window_is_the_interval_when_that_is_shorter():
    clock = FakeClock()
    scheduler, _tasks = make_scheduler(clock, spread=60)
    scheduler.replace_all(target(pid, interval=10) for pid in range(1, 101))
    assert max(scheduler.due_in(pid) for pid in range(1, 101)) < 10


def test_spreading_is_deterministic_by_project_id():
    due = []
    for _ in range(2):
        clock = FakeClock()
        scheduler, _ = make_scheduler(clock)
        scheduler.replace_all(target(pid) for pid in (9, 3, 7))
        due.append([scheduler.due_in(pid) for pid in (3, 7, 9)])
    assert due[0] == due[1]
    assert due[0] == sorted(due[0])


def test_replace_all_adds_updates_and_removes():
    clock = FakeClock()
    scheduler, _tasks = make_scheduler(clock)
    scheduler.replace_all([target(1), target(2), target(3)])
    due_before = scheduler.due_in(2)
    summary = scheduler.replace_all(
        [target(2), target(3, url="http://127.0.0.1/changed"), target(4)]
    )
    assert (summary.added, summary.updated, summary.removed) == (1, 1, 1)
    assert scheduler.target(1) is None
    assert scheduler.target(3).url == "http://127.0.0.1/changed"
    assert scheduler.due_in(2) == due_before  # unchanged projects keep their time


def test_a_reload_larger_than_a_chunk_adds_updates_removes_and_spreads_all():
    clock = FakeClock()
    scheduler, _tasks = make_scheduler(clock, spread=60)
    count = RELOAD_CHUNK * 2 + 500
    scheduler.replace_all(target(pid, interval=300) for pid in range(1, count + 1))
    kept = range(RELOAD_CHUNK, count + 1)
    due_before = [scheduler.due_in(pid) for pid in kept]
    summary = scheduler.replace_all(
        [target(pid, interval=300) for pid in kept]
        + [target(count + 1, url="http://127.0.0.1/new")]
    )
    assert (summary.added, summary.updated, summary.removed) == (
        1,
        0,
        RELOAD_CHUNK - 1,
    )
    assert scheduler.project_count == len(kept) + 1
    assert [scheduler.due_in(pid) for pid in kept] == due_before
    assert due_before == sorted(due_before)  # spread in project-id order
    assert 59 < due_before[-1] < 60


def test_a_load_wakes_the_scheduler_as_each_chunk_of_new_projects_is_in():
    # A running scheduler dispatches the first projects while the rest go in.
    clock = FakeClock()
    scheduler, _tasks = make_scheduler(clock, spread=60)
    scheduled_when_woken = []
    scheduler.wakeup = lambda: scheduled_when_woken.append(scheduler.project_count)
    scheduler.replace_all(target(pid) for pid in range(1, 2 * RELOAD_CHUNK + 2))
    assert scheduled_when_woken[0] == RELOAD_CHUNK
    assert scheduled_when_woken[-1] == 2 * RELOAD_CHUNK + 1


def test_a_full_queue_makes_the_scheduler_wait_without_dropping():
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock, maxsize=2)
    for pid in range(1, 6):
        scheduler.add(target(pid))
    received = []
    dispatcher = threading.Thread(target=scheduler.dispatch_due)
    dispatcher.start()
    wait_until(lambda: scheduler.dispatched == 2)
    assert dispatcher.is_alive() is True  # blocked on the full queue
    assert tasks.qsize() == 2
    while len(received) < 5:
        received.append(tasks.get(timeout=2).target.project_id)
    dispatcher.join(timeout=2)
    assert sorted(received) == [1, 2, 3, 4, 5]
    assert scheduler.dispatched == 5


def test_stop_interrupts_a_scheduler_waiting_on_a_full_queue():
    tasks: queue.Queue = queue.Queue(1)
    scheduler = Scheduler(tasks)
    scheduler.add(target(1))
    scheduler.add(target(2))
    scheduler.start()
    wait_until(tasks.full)
    started = time.monotonic()
    scheduler.stop(timeout=2)
    assert time.monotonic() - started < 1


def test_the_thread_polls_a_project_added_while_running_within_a_second():
    tasks: queue.Queue = queue.Queue()
    scheduler = Scheduler(tasks)
    scheduler.start()
    try:
        time.sleep(0.2)  # the thread is now waiting with nothing to do
        scheduler.add(target(1, interval=3600))
        task = tasks.get(timeout=1)
        assert task.target.project_id == 1
    finally:
        scheduler.stop(timeout=2)


def test_the_thread_sends_polls_due_close_together_in_one_round():
    """Woken for every due time, the thread took the interpreter lock from
    the workers thousands of times a second: polls due less than a tick
    apart go out in one round."""
    spread = 0.2
    tasks: queue.Queue = queue.Queue()
    scheduler = Scheduler(tasks, spread_seconds=spread)
    scheduler.start()
    try:
        # First polls 0.5 ms apart: 400 due times in 0.2 s.
        scheduler.replace_all(target(pid, interval=3600) for pid in range(1, 401))
        wait_until(lambda: tasks.qsize() == 400)
    finally:
        scheduler.stop(timeout=2)
    # A slower machine only makes fewer rounds.
    assert scheduler.rounds <= spread / DISPATCH_TICK_SECONDS + 10


def test_an_up_poll_finishes_without_waiting_for_a_dispatch_in_progress():
    """Dispatching holds the lock for a whole batch; the common end of a
    poll (up, no re-check streak) must not queue behind it, while a failure,
    which may schedule a re-check, does."""
    clock = FakeClock()
    scheduler, tasks = make_scheduler(clock)
    scheduler.add(target(1))
    scheduler.add(target(2))
    scheduler.dispatch_due()
    drain(tasks)

    def finish(project_id: int, up: bool) -> threading.Thread:
        thread = threading.Thread(
            target=scheduler.poll_finished,
            args=(project_id, outcome(project_id, up=up)),
            daemon=True,
        )
        thread.start()
        thread.join(timeout=1)
        return thread

    with scheduler._lock:  # a dispatch in progress
        assert not finish(1, up=True).is_alive()
        failed = finish(2, up=False)
        assert failed.is_alive()
    failed.join(timeout=5)
    assert scheduler.in_flight_ids() == set()


def test_a_regions_first_polls_come_its_share_of_the_spread_later():
    # Regions (docs/regions.md): pollers of different regions do not poll
    # a project in the same second; never more than a quarter interval.
    def first_due(fraction: float, interval: float) -> float:
        clock = FakeClock()
        scheduler = Scheduler(
            queue.Queue(),
            phase_fraction=fraction,
            phase_spread_seconds=5,
            clock=clock.monotonic,
            wall_clock=clock.wall,
        )
        scheduler.replace_all([target(1, interval=interval)])
        return scheduler.due_in(1)

    assert first_due(0.0, 60) == 0
    assert first_due(0.5, 60) == 2.5
    assert first_due(0.5, 8) == 1.0

from __future__ import annotations

import threading

import pytest

from polling.engine.executor import IDLE_RETIRE_SECONDS
from polling.engine.probe import make_transfers
from tests.support.waiting import wait_until


def test_it_polls_and_reports_outcomes(harness):
    h = harness(limit=2)
    h.executor.start()
    h.submit(1, "/ok")
    h.submit(2, "/status/503")
    outcomes = {o.project_id: o for o in h.outcomes(2)}
    assert outcomes[1].up is True
    assert outcomes[2].error == "expected 200, got 503"
    assert sorted(h.finished) == [1, 2]
    assert (h.stats.total, h.stats.up, h.stats.down) == (2, 1, 1)


def test_it_never_runs_more_polls_than_the_limit(harness):
    h = harness(limit=3)
    h.watch_in_flight()
    h.executor.start()
    for project_id in range(12):
        h.submit(project_id, "/delay/150")
    assert len(h.outcomes(12)) == 12
    assert h.peak_in_flight == 3
    assert h.server.count("/delay") == 12


def test_stop_lets_running_polls_finish_and_drops_queued_ones(harness):
    h = harness(limit=2)
    h.executor.start()
    for project_id in range(5):
        h.submit(project_id, "/delay/400")
    h.wait_for_in_flight(2)
    dropped = h.executor.stop(timeout=5)
    outcomes = [h.results.get_nowait() for _ in range(h.results.qsize())]
    assert len(outcomes) == 2
    assert all(o.up for o in outcomes)
    assert dropped == 3
    assert h.server.count("/delay") == 2
    # Dropped tasks are released too, so their projects can be polled again.
    assert sorted(h.finished) == [0, 1, 2, 3, 4]


def test_scale_to_raises_and_lowers_the_limit_without_losing_work(harness):
    h = harness(limit=2)
    h.executor.start()
    for project_id in range(10):
        h.submit(project_id, "/delay/300")
    h.wait_for_in_flight(2)
    h.executor.scale_to(6)
    h.wait_for_in_flight(6)
    h.executor.scale_to(1)
    assert len(h.outcomes(10)) == 10
    h.watch_in_flight()
    for project_id in range(10, 14):
        h.submit(project_id, "/delay/100")
    assert len(h.outcomes(4)) == 4
    assert h.peak_in_flight == 1
    assert h.executor.limit == 1


def test_a_full_result_queue_makes_workers_wait(harness, target_server):
    h = harness(limit=2, results_size=1)
    h.executor.start()
    for project_id in range(3):
        h.submit(project_id, "/ok")
    # Stats count a poll just before its outcome is queued.
    wait_until(lambda: h.stats.total == 3)
    assert h.results.qsize() == 1  # the other two workers hold theirs
    assert len(h.outcomes(3)) == 3  # nothing was dropped


def test_it_refuses_a_limit_below_one(harness):
    h = harness(limit=1)
    with pytest.raises(ValueError, match="at least 1"):
        h.executor.scale_to(0)


def test_one_thread_keeps_many_polls_in_flight(harness):
    h = harness(limit=20, polls_per_thread=20)
    h.executor.start()
    for project_id in range(20):
        h.submit(project_id, "/delay/300")
    h.wait_for_in_flight(20)
    assert h.executor.threads == 1
    assert all(o.up for o in h.outcomes(20))


def test_worker_threads_start_as_polls_need_them_and_retire_when_idle(harness):
    h = harness(limit=5, polls_per_thread=2, max_threads=3, idle_retire_seconds=0)
    h.executor.start()
    assert h.executor.threads == 1  # not one per two slots of the limit
    for project_id in range(5):
        h.submit(project_id, "/delay/500")
    h.wait_for_in_flight(5)
    assert h.executor.threads == 3
    assert len(h.outcomes(5)) == 5
    wait_until(lambda: h.executor.threads == 1)  # the last one stays
    h.executor.scale_to(2)
    for project_id in range(5, 8):
        h.submit(project_id, "/delay/300")
    h.wait_for_in_flight(2)
    assert h.executor.threads == 1
    assert len(h.outcomes(3)) == 3


def test_thousands_of_slots_start_only_the_threads_the_polls_need(harness):
    h = harness(limit=2000, max_threads=40)
    h.executor.start()
    for project_id in range(120):
        h.submit(project_id, "/delay/1000")
    h.wait_for_in_flight(120)
    assert h.executor.threads == 3  # 120 polls at 50 a thread, of 40 allowed
    assert h.executor.threads_started == 3
    assert all(o.up for o in h.outcomes(120))


def test_past_the_thread_ceiling_each_worker_holds_a_larger_share(harness):
    # 20 slots at 2 a thread would be 10 threads; at most 3 hold 7 each.
    h = harness(limit=20, polls_per_thread=2, max_threads=3)
    h.executor.start()
    for project_id in range(20):
        h.submit(project_id, "/delay/500")
    h.wait_for_in_flight(20)
    assert h.executor.threads == 3
    assert h.executor.threads_started == 3
    assert len(h.outcomes(20)) == 20


def test_a_higher_limit_gives_the_same_workers_more_polls_each(harness):
    h = harness(limit=6, polls_per_thread=2, max_threads=2)
    h.executor.start()
    h.executor.scale_to(30)  # 15 a worker
    for project_id in range(30):
        h.submit(project_id, "/delay/500")
    h.wait_for_in_flight(30)
    assert h.executor.threads == 2
    assert len(h.outcomes(30)) == 30


def test_it_refuses_fewer_than_one_worker_thread(harness):
    with pytest.raises(ValueError, match="at least one worker thread"):
        harness(limit=10, max_threads=0)


def recording_waits(timeouts: list):
    """make_transfers(), noting the timeout of every wait on the sockets."""

    def make():
        transfers = make_transfers()
        wait = transfers.wait

        def recorded(timeout):
            timeouts.append(timeout)
            return wait(timeout)

        transfers.wait = recorded
        return transfers

    return make


def test_an_idle_executor_with_2000_slots_sleeps_until_a_task_comes(harness):
    timeouts = []
    h = harness(limit=2000, make_transfers=recording_waits(timeouts))
    h.executor.start()
    wait_until(lambda: len(timeouts) == 1)
    # One thread, asleep on its sockets and doorbell: it wakes only to see
    # whether it may retire (it is the last one, so it may not).
    assert timeouts == [IDLE_RETIRE_SECONDS]
    assert (h.executor.threads, h.executor.turns, h.tasks.waiting) == (1, 1, 1)
    h.submit(1, "/ok")
    [outcome] = h.outcomes(1)
    assert outcome.up
    # The task rang the sleeping worker's doorbell once, and the poll
    # woke it only for its own socket events: no wait with a short timeout.
    assert h.executor.doorbell_rings == 1
    assert set(timeouts[1:]) <= {None, IDLE_RETIRE_SECONDS}
    assert h.executor.turns <= 8


def test_polls_waiting_on_a_slow_server_cost_turns_per_event_not_per_tick(harness):
    timeouts = []
    h = harness(limit=2000, make_transfers=recording_waits(timeouts))
    h.executor.start()
    wait_until(lambda: h.tasks.waiting == 1)
    for project_id in range(20):
        h.submit(project_id, "/delay/1500")
    assert all(o.up for o in h.outcomes(20))
    # A worker used to look at the queue every 10 ms while its polls
    # waited: 150 turns in these 1.5 s. Now it wakes for sockets and tasks.
    assert h.executor.turns < 80
    assert None in timeouts
    assert all(timeout is None or timeout >= 1 for timeout in timeouts)


def test_polls_in_flight_go_on_while_the_result_queue_is_full(harness):
    h = harness(limit=2, results_size=1)
    h.results.put("queued before")
    h.submit(1, "/ok")
    h.submit(2, "/delay/300", timeout=2)
    h.executor.start()
    # The first outcome cannot be queued; the worker holds it and still
    # finishes the second poll, instead of leaving it to time out.
    wait_until(lambda: h.stats.total == 2)
    assert h.results.get_nowait() == "queued before"
    outcomes = {o.project_id: o for o in h.outcomes(2)}
    assert outcomes[2].up is True
    assert outcomes[1].up is True
    assert sorted(h.finished) == [1, 2]


def test_a_worker_that_fails_gives_up_its_polls_and_goes_on(harness, caplog):
    failures = []

    def transfers_failing_once():
        transfers = make_transfers()
        if not failures:

            def broken_wait(timeout):
                failures.append(timeout)
                raise OSError("epoll went away")

            transfers.wait = broken_wait
        return transfers

    h = harness(limit=2, make_transfers=transfers_failing_once)
    h.executor.start()
    h.submit(1, "/delay/100")
    # Released without an outcome, so the scheduler polls it again later.
    wait_until(lambda: h.finished == [1])
    h.submit(2, "/ok")
    [outcome] = h.outcomes(1)
    assert (outcome.project_id, outcome.up) == (2, True)
    assert h.executor.in_flight == 0
    assert len(failures) == 1
    assert "A poll worker failed" in caplog.text


def test_a_worker_that_cannot_start_leaves_the_polls_to_the_others(
    harness, monkeypatch, caplog
):
    start = threading.Thread.start

    def only_the_first_worker(thread):
        if (
            thread.name.startswith("poller-worker-")
            and thread.name != "poller-worker-1"
        ):
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", only_the_first_worker)
    h = harness(limit=6, polls_per_thread=2, max_threads=3)
    h.executor.start()
    for project_id in range(6):
        h.submit(project_id, "/delay/200")
    assert all(o.up for o in h.outcomes(6))
    assert h.executor.threads == 1
    # Tried once, then not again at every task for a while.
    assert caplog.text.count("Could not start poll worker 2") == 1

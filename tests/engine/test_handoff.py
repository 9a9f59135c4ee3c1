"""The task queue between the scheduler and the workers: a bounded FIFO
whose full-queue producer is woken once a quarter of it is free."""

from __future__ import annotations

import queue
import threading

import pytest

from polling.engine.handoff import TaskQueue
from polling.engine.wakeup import Doorbell


def counting_wakeups(tasks: TaskQueue) -> list[int]:
    """Count the queue's calls to wake a producer waiting for room."""
    calls: list[int] = []
    notify = tasks.not_full.notify

    def counted(n: int = 1) -> None:
        calls.append(len(tasks.queue))  # the lock is held: not qsize()
        notify(n)

    tasks.not_full.notify = counted
    return calls


def test_it_hands_items_over_in_order():
    tasks = TaskQueue(3)
    for item in "abc":
        tasks.put_nowait(item)
    with pytest.raises(queue.Full):
        tasks.put_nowait("d")
    assert [tasks.get_nowait(), tasks.get(), tasks.get(timeout=1)] == list("abc")


def test_an_empty_queue_says_so():
    tasks = TaskQueue(3)
    with pytest.raises(queue.Empty):
        tasks.get_nowait()
    with pytest.raises(queue.Empty):
        tasks.get(timeout=0.01)
    with pytest.raises(ValueError, match="non-negative"):
        tasks.get(timeout=-1)


def test_it_must_be_bounded():
    with pytest.raises(ValueError, match="at least 1"):
        TaskQueue(0)


def test_a_producer_is_woken_once_a_quarter_of_the_queue_is_free():
    tasks = TaskQueue(8)
    for item in range(8):
        tasks.put_nowait(item)
    wakeups = counting_wakeups(tasks)

    tasks.get_nowait()
    assert wakeups == []  # one free slot of eight
    tasks.get_nowait()
    tasks.get_nowait()
    assert wakeups == [6, 5]  # two free, then three


def test_a_queue_of_one_wakes_its_producer_at_every_take():
    tasks = TaskQueue(1)
    tasks.put_nowait("a")
    wakeups = counting_wakeups(tasks)
    tasks.get_nowait()
    assert wakeups == [0]


def test_a_blocked_producer_gets_every_item_through():
    tasks = TaskQueue(8)
    items = list(range(200))

    def produce() -> None:
        for item in items:
            tasks.put(item)  # blocks while full; never woken means stuck

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    received = [tasks.get(timeout=5) for _ in items]
    producer.join(5)
    assert received == items
    assert not producer.is_alive()


def test_a_put_rings_the_worker_that_waited_last_and_only_one():
    tasks = TaskQueue(10)
    first, last = Doorbell(), Doorbell()
    assert tasks.take(5, first, pass_on=True) == ([], False)
    assert tasks.take(5, last, pass_on=True) == ([], False)
    assert tasks.waiting == 2
    for item in "abc":
        tasks.put(item)
    # One wake-up for the burst, for the worker most likely busy already.
    assert (first.rings, last.rings) == (0, 1)
    # It has room for two: the rest goes to the other worker.
    assert tasks.take(2, last, pass_on=True) == (["a", "b"], False)
    assert first.rings == 1
    assert tasks.take(5, first, pass_on=True) == (["c"], False)
    assert tasks.waiting == 1  # `first` emptied it with room left


def test_tasks_no_worker_waits_for_are_reported_once_a_put():
    tasks = TaskQueue(10)
    calls = []
    tasks.on_unattended = lambda: calls.append(tasks.qsize())
    tasks.put("a")
    assert calls == [1]
    bell = Doorbell()
    # A full worker leaves tasks behind that no one was rung for.
    tasks.put("b")
    assert tasks.take(1, bell, pass_on=True) == (["a"], True)
    # With every slot taken it passes nothing on: the worker that frees
    # one takes the next task.
    assert tasks.take(0, bell, pass_on=False) == ([], False)


def test_a_worker_that_ends_hands_its_wake_up_on():
    tasks = TaskQueue(10)
    staying, ending = Doorbell(), Doorbell()
    tasks.take(5, staying, pass_on=True)
    tasks.take(5, ending, pass_on=True)
    tasks.put("a")
    assert (staying.rings, ending.rings) == (0, 1)
    assert tasks.leave(ending) is False  # a task is queued: stay and take it
    tasks.forget(ending)
    assert staying.rings == 1
    assert tasks.take(5, staying, pass_on=True) == (["a"], False)
    assert tasks.leave(staying) is True
    tasks.put("b")
    assert staying.rings == 1  # no longer waiting: not rung
